from pathlib import Path

CLEAN = Path("/app/contacts_clean.csv")


def test_output_exists():
    """The cleaned file was written."""
    assert CLEAN.exists(), "/app/contacts_clean.csv does not exist"


def test_header_kept():
    """The cleaned file keeps the original header."""
    first = CLEAN.read_text().splitlines()[0]
    assert first == "name,email,city"
