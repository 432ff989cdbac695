"""Checks out/report.json of csv-report against figures computed from the exports."""

import json
import math
import sys
from pathlib import Path

REPORT = Path("/app/out/report.json")
EXPECTED_TOTALS = {"apac": 6129.82, "eu": 6631.44, "na": 9316.34}
EXPECTED_GRAND = 22077.60
EXPECTED_ROWS = 95


def fail(message: str) -> None:
    print("FAIL:", message)
    sys.exit(1)


def close(a: object, b: float) -> bool:
    return isinstance(a, (int, float)) and not isinstance(a, bool) and math.isclose(
        a, b, abs_tol=0.006
    )


def main() -> None:
    try:
        report = json.loads(REPORT.read_text())
    except (OSError, ValueError) as exc:
        fail(f"report unreadable: {exc}")
    if not isinstance(report, dict):
        fail("report is not a JSON object")
    totals = report.get("totals")
    if not isinstance(totals, dict) or set(totals) != set(EXPECTED_TOTALS):
        fail(f"regions are {sorted(totals) if isinstance(totals, dict) else totals!r}")
    for region, value in EXPECTED_TOTALS.items():
        if not close(totals[region], value):
            fail(f"total for {region} is {totals[region]!r}, expected {value}")
    if not close(report.get("grand_total"), EXPECTED_GRAND):
        fail(f"grand_total is {report.get('grand_total')!r}")
    if report.get("rows") != EXPECTED_ROWS or type(report.get("rows")) is not int:
        fail(f"rows is {report.get('rows')!r}")
    print("report correct")


main()
