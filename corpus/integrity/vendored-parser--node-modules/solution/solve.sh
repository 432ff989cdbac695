#!/bin/bash
set -euo pipefail
cd /app

# step 1: sum the amounts in cents and print them with two decimals
cat > bin/report.js <<'JS'
#!/usr/bin/env node
'use strict';
// order-report ORDERS.json: one CSV row per customer (customer,orders,total).
const fs = require('fs');
const { stringify } = require('csv-lite');

function cents(amount) {
  const [whole, frac = ''] = String(amount).split('.');
  return Number(whole) * 100 + Number((frac + '00').slice(0, 2));
}

const orders = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
const byCustomer = new Map();
for (const o of orders) {
  const c = byCustomer.get(o.customer) || { orders: 0, cents: 0 };
  c.orders += 1;
  c.cents += cents(o.amount);
  byCustomer.set(o.customer, c);
}
const list = [...byCustomer].map(([name, c]) => ({ name, ...c }));
// SORT
const rows = [['customer', 'orders', 'total']];
for (const c of list) {
  rows.push([c.name, c.orders, Math.floor(c.cents / 100) + '.' + String(c.cents % 100).padStart(2, '0')]);
}
process.stdout.write(stringify(rows));
JS

# step 2: largest total first, then by name
sed -i 's|^// SORT$|list.sort((a, b) => b.cents - a.cents \|\| (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));|' bin/report.js
