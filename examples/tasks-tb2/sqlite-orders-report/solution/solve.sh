#!/bin/bash
set -e

# Install the sqlite3 CLI
apt-get update
apt-get install -y sqlite3

# Create the table and import the CSV (skipping its header)
cd /app
sqlite3 shop.db <<'SQL'
CREATE TABLE orders (
    order_id INTEGER PRIMARY KEY,
    customer TEXT,
    amount_cents INTEGER,
    status TEXT
);
.mode csv
.import --skip 1 orders.csv orders
SQL

# Top three paying customers
sqlite3 -separator ',' shop.db \
  "SELECT customer, SUM(amount_cents) AS total FROM orders WHERE status = 'paid' GROUP BY customer ORDER BY total DESC LIMIT 3;" \
  > /app/top_customers.txt
