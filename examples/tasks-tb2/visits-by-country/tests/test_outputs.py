import csv
import json
from pathlib import Path

COUNTS = Path("/app/country_counts.json")
CODES = Path("/tests/country-codes.csv")


def _valid_codes():
    with CODES.open(newline="", encoding="utf-8") as fh:
        return {row["ISO3166-1-Alpha-2"] for row in csv.DictReader(fh) if row["ISO3166-1-Alpha-2"]}


def test_output_is_json_object():
    """The result is a JSON object of integer counts."""
    data = json.loads(COUNTS.read_text())
    assert isinstance(data, dict)
    assert all(isinstance(v, int) for v in data.values())


def test_only_valid_country_codes():
    """Every key is an official ISO 3166-1 alpha-2 code."""
    data = json.loads(COUNTS.read_text())
    invalid = set(data) - _valid_codes()
    assert not invalid, f"not ISO 3166-1 alpha-2: {sorted(invalid)}"


def test_counts():
    """Visits are counted case-insensitively per valid country."""
    data = json.loads(COUNTS.read_text())
    assert data == {"BR": 1, "DE": 3, "FR": 2, "GB": 1}, data
