"""Compare the summary and write a junit report (crashes if the summary is absent)."""
import json
import sys

EXPECTED = {"regions": {"apac": 245.0, "eu": 200.0, "na": 200.0}, "total": 645.0, "rows": 8}
got = json.load(open("/srv/data/out/summary.json"))
failures = int(got != EXPECTED)
with open(sys.argv[1], "w") as f:
    f.write(f'<testsuite name="summary" tests="1" failures="{failures}" errors="0"></testsuite>\n')
