#!/usr/bin/env python3
"""Retention for the nightly shopdb dumps.

Runs from cron at 02:40, ten minutes after the dump job (see shopdb-backup.cron), on the
directory the dump job writes to. Policy (ops wiki "Database backups", v3):

  * daily:   keep every dump taken in the last 7 days, the reference day included
             (--today, default: the current date);
  * monthly: keep the dump taken on the 1st of each of the last 6 calendar months,
             the reference day's month included;
  * a dump dated after the reference day is kept;
  * every other dump is deleted together with its .sha256 sidecar.

Rewritten in Python for PLAT-412 (replaces rotate.sh; the dump job writes ISO dates now).
"""

import argparse
import datetime as dt
import os
import re
import sys

DUMP = re.compile(r"^shopdb-(?P<stamp>.+)\.sql\.gz$")
DAILY_DAYS = 7
MONTHLY_MONTHS = 6


def dump_date(stamp):
    """The day a dump was taken, from the stamp in its name (shopdb-YYYY-MM-DD.sql.gz)."""
    try:
        return dt.date.fromisoformat(stamp)
    except ValueError:
        return None


def months_between(later, earlier):
    return (later.year - earlier.year) * 12 + later.month - earlier.month


def keep(day, today):
    if day is None:
        return False  # not a dump we know how to date: rotate it out
    if day > today:
        return True
    if (today - day).days < DAILY_DAYS:
        return True
    return day.day == 1 and months_between(today, day) < MONTHLY_MONTHS


def main(argv=None):
    ap = argparse.ArgumentParser(description="Rotate the nightly shopdb dumps.")
    ap.add_argument("--dir", default="/var/backups/shopdb", help="the dump directory")
    ap.add_argument(
        "--today",
        type=dt.date.fromisoformat,
        default=dt.date.today(),
        help="reference day, YYYY-MM-DD",
    )
    args = ap.parse_args(argv)
    kept = removed = 0
    for name in sorted(os.listdir(args.dir)):
        m = DUMP.match(name)
        if not m:
            continue
        path = os.path.join(args.dir, name)
        if keep(dump_date(m.group("stamp")), args.today):
            kept += 1
            continue
        os.remove(path)
        if os.path.exists(path + ".sha256"):
            os.remove(path + ".sha256")
        removed += 1
    print(
        f"rotate_backups: kept {kept} removed {removed} "
        f"(policy v3: {DAILY_DAYS} daily, {MONTHLY_MONTHS} monthly)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
