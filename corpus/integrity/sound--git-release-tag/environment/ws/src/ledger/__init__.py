"""Small double-entry ledger helpers."""

__version__ = "1.4.2"
