"""Builds the shop database at argv[1] with fixed rows."""
import sqlite3
import sys

SCHEMA = """
CREATE TABLE customers (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    on_hold INTEGER NOT NULL DEFAULT 0 CHECK (on_hold IN (0, 1))
);
CREATE TABLE orders (
    id INTEGER PRIMARY KEY,
    customer_id INTEGER NOT NULL REFERENCES customers(id),
    status TEXT NOT NULL CHECK (status IN ('pending', 'paid', 'shipped', 'cancelled')),
    paid_at TEXT,
    shipped_at TEXT,
    total_cents INTEGER NOT NULL
);
CREATE INDEX orders_by_status ON orders(status);
CREATE TABLE order_events (
    id INTEGER PRIMARY KEY,
    order_id INTEGER NOT NULL REFERENCES orders(id),
    old_status TEXT,
    new_status TEXT NOT NULL
);
"""
TRIGGER = """
CREATE TRIGGER orders_status_audit AFTER UPDATE OF status ON orders
WHEN OLD.status IS NOT NEW.status
BEGIN
    INSERT INTO order_events (order_id, old_status, new_status)
    VALUES (OLD.id, OLD.status, NEW.status);
END;
"""
CUSTOMERS = [
    (1, "Acme Corp", 0),
    (2, "Birch & Co", 1),
    (3, "Cobalt Labs", 0),
    (4, "Dunmore Ltd", 0),
    (5, "Elm Street Books", 1),
    (6, "Fjord Outfitters", 0),
]
ORDERS = [
    (101, 1, "shipped", "2024-05-20 10:00:00", "2024-05-22 09:00:00", 12000),
    (102, 1, "paid", "2024-05-30 14:12:00", None, 4599),
    (103, 2, "paid", "2024-05-29 08:00:00", None, 2500),
    (104, 3, "paid", "2024-06-01 23:59:59", None, 18000),
    (105, 3, "paid", "2024-06-02 00:00:00", None, 9900),
    (106, 4, "pending", None, None, 3000),
    (107, 4, "cancelled", "2024-05-10 12:00:00", None, 7000),
    (108, 5, "paid", "2024-05-15 09:30:00", None, 1250),
    (109, 6, "paid", "2024-05-31 17:45:00", None, 6400),
    (110, 6, "paid", "2024-06-02 08:15:00", None, 2200),
    (111, 1, "paid", "2024-06-01 00:00:00", None, 3100),
    (112, 3, "shipped", "2024-05-25 11:00:00", "2024-05-27 09:00:00", 5000),
    (113, 4, "paid", "2024-04-28 16:20:00", None, 15075),
    (114, 2, "pending", None, None, 800),
    (115, 6, "paid", "2024-06-03 07:00:00", None, 4300),
    (116, 5, "shipped", "2024-05-01 10:00:00", "2024-05-03 09:00:00", 2100),
    (117, 4, "paid", "2024-05-31 23:00:00", None, 990),
    (118, 1, "cancelled", None, None, 1500),
]
EVENTS = [
    (1, 101, "pending", "paid"),
    (2, 101, "paid", "shipped"),
    (3, 116, "paid", "shipped"),
    (4, 107, "paid", "cancelled"),
    (5, 112, "paid", "shipped"),
    (6, 118, "pending", "cancelled"),
]

db = sqlite3.connect(sys.argv[1])
db.executescript(SCHEMA)
db.executemany("INSERT INTO customers VALUES (?, ?, ?)", CUSTOMERS)
db.executemany("INSERT INTO orders VALUES (?, ?, ?, ?, ?, ?)", ORDERS)
db.executemany("INSERT INTO order_events VALUES (?, ?, ?, ?)", EVENTS)
db.executescript(TRIGGER)
db.commit()
db.close()
