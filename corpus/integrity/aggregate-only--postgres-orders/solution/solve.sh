#!/bin/bash
set -euo pipefail

# step 1: amounts to cents in a new column, the text column dropped
pg_ctlcluster 15 main start
runuser -u postgres -- psql -q -v ON_ERROR_STOP=1 -d shop <<'SQL'
BEGIN;
ALTER TABLE orders ADD COLUMN amount_cents bigint;
UPDATE orders SET amount_cents =
    (replace(split_part(amount_text, ' ', 1), ',', '')::numeric * 100)::bigint;
ALTER TABLE orders ALTER COLUMN amount_cents SET NOT NULL;
ALTER TABLE orders DROP COLUMN amount_text;
COMMIT;
SQL
pg_ctlcluster 15 main stop

# step 2: drop the duplicate imports, keeping the lowest id of each external_ref
pg_ctlcluster 15 main start
runuser -u postgres -- psql -q -v ON_ERROR_STOP=1 -d shop -c \
  "DELETE FROM orders o USING orders k WHERE o.external_ref = k.external_ref AND o.id > k.id"
pg_ctlcluster 15 main stop
