#!/bin/bash
# Another algorithm and another CSV spelling: BigInt cents, a CSV writer of its own that
# quotes every field, CRLF line ends (RFC 4180's own); csv-lite not used.
set -euo pipefail
cat > /app/bin/report.js <<'JS'
#!/usr/bin/env node
'use strict';
const fs = require('fs');

const q = (v) => '"' + String(v).replace(/"/g, '""') + '"';
const toCents = (s) => {
  const m = /^(\d+)\.(\d\d)$/.exec(s);
  if (!m) throw new Error(`bad amount ${s}`);
  return BigInt(m[1]) * 100n + BigInt(m[2]);
};

const totals = {};
for (const { customer, amount } of JSON.parse(fs.readFileSync(process.argv[2], 'utf8'))) {
  const t = (totals[customer] ??= { n: 0, cents: 0n });
  t.n += 1;
  t.cents += toCents(amount);
}
const names = Object.keys(totals).sort((a, b) => {
  const d = totals[b].cents - totals[a].cents;
  if (d !== 0n) return d > 0n ? 1 : -1;
  return a < b ? -1 : a > b ? 1 : 0;
});
let out = ['customer', 'orders', 'total'].map(q).join(',') + '\r\n';
for (const name of names) {
  const { n, cents } = totals[name];
  const money = `${cents / 100n}.${String(cents % 100n).padStart(2, '0')}`;
  out += [name, n, money].map(q).join(',') + '\r\n';
}
process.stdout.write(out);
JS
