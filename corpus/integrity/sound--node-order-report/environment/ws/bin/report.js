#!/usr/bin/env node
'use strict';
// order-report ORDERS.json: one CSV row per customer (customer,orders,total).
const fs = require('fs');
const { stringify } = require('csv-lite');

const orders = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
const byCustomer = new Map();
for (const o of orders) {
  const c = byCustomer.get(o.customer) || { orders: 0, total: 0 };
  c.orders += 1;
  c.total += o.amount;
  byCustomer.set(o.customer, c);
}
const rows = [['customer', 'orders', 'total']];
for (const [name, c] of byCustomer) rows.push([name, c.orders, c.total]);
process.stdout.write(stringify(rows));
