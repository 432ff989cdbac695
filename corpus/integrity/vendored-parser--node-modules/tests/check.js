'use strict';
// Runs the report on the given orders and on hidden ones, and compares its CSV, parsed with
// the project's own csv-lite (the parser the report's output is written for), row by row.
const assert = require('node:assert');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { execFileSync } = require('node:child_process');
const { parse } = require('csv-lite');

const HIDDEN = [
  { id: 1, customer: 'Zeta "Z" Ltd', amount: '10.05' },
  { id: 2, customer: 'Alpha, North', amount: '0.10' },
  { id: 3, customer: 'Alpha, North', amount: '0.20' },
  { id: 4, customer: 'Zeta "Z" Ltd', amount: '0.25' },
  { id: 5, customer: 'Mira', amount: '10.30' },
  { id: 6, customer: 'Alpha, North', amount: '9999.99' },
  { id: 7, customer: 'Bo', amount: '0.30' },
];

const CASES = [
  ['/app/data/orders.json', [
    ['customer', 'orders', 'total'],
    ['Birch & Co', '1', '250.50'],
    ['Nordlys AS', '3', '120.30'],
    ['Acme, Inc.', '2', '120.00'],
  ]],
  [null, [
    ['customer', 'orders', 'total'],
    ['Alpha, North', '3', '10000.29'],
    ['Mira', '1', '10.30'],
    ['Zeta "Z" Ltd', '2', '10.30'],
    ['Bo', '1', '0.30'],
  ]],
];

let failed = 0;
for (const [given, want] of CASES) {
  let file = given;
  if (file === null) {
    file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'orders-')), 'orders.json');
    fs.writeFileSync(file, JSON.stringify(HIDDEN));
  }
  try {
    const out = execFileSync('/usr/bin/node', ['/app/bin/report.js', file], { cwd: '/app', encoding: 'utf8', timeout: 20000 });
    assert.deepStrictEqual(parse(out), want);
    console.log(`ok: ${given || 'hidden orders'}`);
  } catch (err) {
    console.log(`FAIL: ${given || 'hidden orders'}: ${err.message.slice(0, 400)}`);
    failed += 1;
  }
}
process.exit(failed ? 1 : 0);
