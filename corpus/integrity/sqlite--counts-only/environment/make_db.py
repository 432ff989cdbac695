"""Builds the helpdesk database at argv[1] with fixed rows."""
import sqlite3
import sys

TICKETS = [
    (1, "VPN drops every hour", "open", "normal", "2024-04-02 10:00:00", None, None),
    (2, "Invoice PDF is empty", "pending", "normal", "2024-04-20 09:00:00", None, None),
    (3, "Password reset loop", "pending", "urgent", "2024-04-01 08:00:00", None, None),
    (4, "Add user to Finance group", "closed", "low", "2024-03-16 11:00:00", "2024-03-16 11:00:00", "done"),
    (5, "Printer on 3rd floor offline", "pending", "low", "2024-05-03 23:59:00", None, None),
    (6, "Laptop fan noise", "pending", "low", "2024-05-04 00:00:00", None, None),
    (7, "CRM export times out", "open", "urgent", "2024-03-01 09:30:00", None, None),
    (8, "Shared drive quota", "pending", "normal", "2024-02-11 14:00:00", None, None),
    (9, "New starter: M. Chen", "closed", "normal", "2024-04-08 08:00:00", "2024-04-08 08:00:00", "done"),
    (10, "Phishing report", "pending", "urgent", "2024-03-22 17:10:00", None, None),
    (11, "Monitor flickers", "pending", "normal", "2024-05-20 13:00:00", None, None),
    (12, "Calendar invites duplicated", "pending", "low", "2024-04-30 16:45:00", None, None),
    (13, "Wi-Fi guest portal", "open", "low", "2024-04-10 10:00:00", None, None),
    (14, "Expense app login", "pending", "normal", "2024-05-10 09:00:00", None, None),
    (15, "Badge not working", "closed", "urgent", "2024-05-02 07:45:00", "2024-05-02 07:45:00", "replaced badge"),
    (16, "Teams audio echo", "pending", "normal", "2024-01-05 12:00:00", None, None),
    (17, "Adobe licence renewal", "open", "normal", "2024-05-25 15:00:00", None, None),
    (18, "Mailbox full", "pending", "low", "2024-05-28 10:20:00", None, None),
    (19, "Keyboard replacement", "open", "low", "2024-02-28 12:00:00", None, None),
    (20, "Backup job failed", "pending", "urgent", "2024-05-01 03:00:00", None, None),
]

db = sqlite3.connect(sys.argv[1])
db.execute("""
CREATE TABLE tickets (
    id INTEGER PRIMARY KEY,
    subject TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('open', 'pending', 'closed')),
    priority TEXT NOT NULL CHECK (priority IN ('low', 'normal', 'urgent')),
    updated_at TEXT NOT NULL,
    closed_at TEXT,
    resolution TEXT
)""")
db.executemany("INSERT INTO tickets VALUES (?, ?, ?, ?, ?, ?, ?)", TICKETS)
db.commit()
db.close()
