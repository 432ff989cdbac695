"""Temporal workflows, activities, workers and client helpers for the envfactory pipeline.

pipeline.py (workflow definitions) → activities.py (thin async wrappers) → services.py
(the plain-Python seam) → real.py (the store, sandboxes, agents and verifiers behind it).
"""
