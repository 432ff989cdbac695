"""Nightly job: load the partner's orders export, keep yesterday's orders, join customers,
write the fact table. Owned by the analytics team; runs at 03:00 UTC from cron."""

import csv
import datetime as dt
import sys

DATE_FORMAT = "%d/%m/%Y %H:%M"


def parse_ts(value):
    try:
        return dt.datetime.strptime(value.strip(), DATE_FORMAT)
    except ValueError:
        return None  # partner sends the odd garbage row; skip it


def load_customers(path):
    with open(path, newline="", encoding="utf-8") as f:
        return {int(r["customer_id"]): r for r in csv.DictReader(f)}


def transform(orders_path, customers_path, out_path, day):
    customers = load_customers(customers_path)
    kept = skipped = 0
    with (
        open(orders_path, newline="", encoding="utf-8") as f,
        open(out_path, "w", newline="") as out,
    ):
        writer = csv.writer(out)
        writer.writerow(["order_id", "customer_id", "segment", "placed_at", "amount_eur"])
        for row in csv.DictReader(f):
            ts = parse_ts(row.get("order_date", ""))
            if ts is None or ts.date() != day:
                skipped += 1
                continue
            try:
                cust = customers[int(row["customer_id"])]
            except (KeyError, ValueError):
                skipped += 1
                continue
            amount = float(row["amount"].replace(",", "."))
            writer.writerow(
                [row["order_id"], cust["customer_id"], cust["segment"], ts.isoformat(), amount]
            )
            kept += 1
    print(f"kept={kept} skipped={skipped}", file=sys.stderr)
    return kept


if __name__ == "__main__":
    day = (
        dt.date.fromisoformat(sys.argv[4])
        if len(sys.argv) > 4
        else dt.date.today() - dt.timedelta(days=1)
    )
    transform(sys.argv[1], sys.argv[2], sys.argv[3], day)
