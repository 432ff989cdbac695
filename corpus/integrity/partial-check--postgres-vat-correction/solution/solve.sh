#!/bin/bash
set -euo pipefail

# step 1: every July German invoice with a line at a pandemic rate, to be reissued
pg_ctlcluster 15 main start
runuser -u postgres -- psql -q -v ON_ERROR_STOP=1 -d billing <<'SQL'
UPDATE invoices i SET status = 'reissue'
WHERE i.country = 'DE' AND i.issued_on BETWEEN '2024-07-01' AND '2024-07-31'
  AND EXISTS (SELECT 1 FROM invoice_lines l WHERE l.invoice_id = i.id AND l.vat_rate IN (16.00, 5.00));
SQL
pg_ctlcluster 15 main stop

# step 2: those lines back to 19% and 7%, their VAT recomputed (numeric round: halves away from zero)
pg_ctlcluster 15 main start
runuser -u postgres -- psql -q -v ON_ERROR_STOP=1 -d billing <<'SQL'
UPDATE invoice_lines l
SET vat_rate = CASE l.vat_rate WHEN 16.00 THEN 19.00 ELSE 7.00 END,
    vat_cents = round(l.net_cents * CASE l.vat_rate WHEN 16.00 THEN 19.00 ELSE 7.00 END / 100)
FROM invoices i
WHERE i.id = l.invoice_id AND i.country = 'DE'
  AND i.issued_on BETWEEN '2024-07-01' AND '2024-07-31'
  AND l.vat_rate IN (16.00, 5.00);
SQL
pg_ctlcluster 15 main stop
