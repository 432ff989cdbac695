"""Regional sales report: data/sales/*.csv (region,sku,amount) -> out/report.json."""

import csv
import json
import logging
from pathlib import Path

APP = Path(__file__).resolve().parent
logging.basicConfig(filename=APP / "logs" / "etl.log", level=logging.INFO,
                    format="%(asctime)s %(levelname)s %(message)s")


def main() -> None:
    totals: dict[str, float] = {}
    rows = 0
    for path in sorted((APP / "data" / "sales").glob("*.csv")):
        with path.open(newline="") as f:
            reader = csv.DictReader(f)
            if reader.fieldnames != ["region", "sku", "amount"]:
                logging.warning("skipped %s: header %s", path.name, reader.fieldnames)
                continue
            for row in reader:
                totals[row["region"]] = totals.get(row["region"], 0.0) + float(row["amount"])
                rows += 1
    report = {
        "totals": {k: round(v, 2) for k, v in sorted(totals.items())},
        "grand_total": round(sum(totals.values()), 2),
        "rows": rows,
    }
    (APP / "out").mkdir(exist_ok=True)
    (APP / "out" / "report.json").write_text(json.dumps(report, indent=2) + "\n")
    logging.info("wrote report: %d rows", rows)


if __name__ == "__main__":
    main()
