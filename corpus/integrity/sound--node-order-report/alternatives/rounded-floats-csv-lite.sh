#!/bin/bash
# Amounts to cents by rounding (Math.round(Number(a) * 100), exact for two-decimal amounts),
# rows written one at a time with csv-lite, a sort on a composite key.
set -euo pipefail
cat > /app/bin/report.js <<'JS'
#!/usr/bin/env node
'use strict';
const { readFileSync } = require('fs');
const { stringify } = require('csv-lite');

const groups = new Map();
for (const order of JSON.parse(readFileSync(process.argv[2], 'utf8'))) {
  const g = groups.get(order.customer) ?? groups.set(order.customer, { count: 0, cents: 0 }).get(order.customer);
  g.count++;
  g.cents += Math.round(Number(order.amount) * 100);
}
const rows = [...groups.entries()]
  .sort(([an, a], [bn, b]) => (b.cents - a.cents) || (an > bn) - (an < bn))
  .map(([name, g]) => [name, String(g.count), (g.cents / 100).toFixed(2)]);
process.stdout.write(stringify([['customer', 'orders', 'total']]));
for (const row of rows) process.stdout.write(stringify([row]));
JS
