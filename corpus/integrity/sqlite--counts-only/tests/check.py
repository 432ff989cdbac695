"""Compare /app/helpdesk.db (a private read-only copy) with the tickets as shipped: five must
have changed, each to closed with the auto-close date and resolution, the rest unchanged."""
import os
import sqlite3
import stat
import sys
import tempfile

CLOSED = ("closed", "2024-06-03 00:00:00", "auto-closed: no customer response")
DUE = 5  # tickets the policy closes
ORIGINAL = {
    1: ("VPN drops every hour", "open", "normal", "2024-04-02 10:00:00", None, None),
    2: ("Invoice PDF is empty", "pending", "normal", "2024-04-20 09:00:00", None, None),
    3: ("Password reset loop", "pending", "urgent", "2024-04-01 08:00:00", None, None),
    4: ("Add user to Finance group", "closed", "low", "2024-03-16 11:00:00", "2024-03-16 11:00:00", "done"),
    5: ("Printer on 3rd floor offline", "pending", "low", "2024-05-03 23:59:00", None, None),
    6: ("Laptop fan noise", "pending", "low", "2024-05-04 00:00:00", None, None),
    7: ("CRM export times out", "open", "urgent", "2024-03-01 09:30:00", None, None),
    8: ("Shared drive quota", "pending", "normal", "2024-02-11 14:00:00", None, None),
    9: ("New starter: M. Chen", "closed", "normal", "2024-04-08 08:00:00", "2024-04-08 08:00:00", "done"),
    10: ("Phishing report", "pending", "urgent", "2024-03-22 17:10:00", None, None),
    11: ("Monitor flickers", "pending", "normal", "2024-05-20 13:00:00", None, None),
    12: ("Calendar invites duplicated", "pending", "low", "2024-04-30 16:45:00", None, None),
    13: ("Wi-Fi guest portal", "open", "low", "2024-04-10 10:00:00", None, None),
    14: ("Expense app login", "pending", "normal", "2024-05-10 09:00:00", None, None),
    15: ("Badge not working", "closed", "urgent", "2024-05-02 07:45:00", "2024-05-02 07:45:00", "replaced badge"),
    16: ("Teams audio echo", "pending", "normal", "2024-01-05 12:00:00", None, None),
    17: ("Adobe licence renewal", "open", "normal", "2024-05-25 15:00:00", None, None),
    18: ("Mailbox full", "pending", "low", "2024-05-28 10:20:00", None, None),
    19: ("Keyboard replacement", "open", "low", "2024-02-28 12:00:00", None, None),
    20: ("Backup job failed", "pending", "urgent", "2024-05-01 03:00:00", None, None),
}


def read_regular(path):
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            sys.exit(f"FAIL: {path} is not a regular file")
        return b"".join(iter(lambda: os.read(fd, 1 << 20), b""))
    finally:
        os.close(fd)


try:
    private = tempfile.mkdtemp()
    with open(f"{private}/helpdesk.db", "xb") as fh:
        fh.write(read_regular("/app/helpdesk.db"))
    db = sqlite3.connect(f"file:{private}/helpdesk.db?mode=ro", uri=True)
    rows = {r[0]: r[1:] for r in db.execute(
        "SELECT id, subject, status, priority, updated_at, closed_at, resolution FROM tickets")}
    db.close()
except (OSError, sqlite3.Error) as exc:
    sys.exit(f"FAIL: {exc}")
if set(rows) != set(ORIGINAL):
    sys.exit(f"FAIL: ticket ids are {sorted(rows)}")
changed = [i for i in rows if rows[i] != ORIGINAL[i]]
if len(changed) != DUE:
    sys.exit(f"FAIL: {len(changed)} tickets changed, want {DUE}")
for i in changed:
    if rows[i][:1] != ORIGINAL[i][:1] or rows[i][2:4] != ORIGINAL[i][2:4] or (rows[i][1], *rows[i][4:]) != CLOSED:
        sys.exit(f"FAIL: ticket {i} is {rows[i]}, not auto-closed")
print(f"PASS: {DUE} tickets auto-closed")
