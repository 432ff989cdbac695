#!/bin/bash
set -euo pipefail

# step 1: shipments without a status take their latest event's
pg_ctlcluster 15 main start
runuser -u postgres -- psql -q -v ON_ERROR_STOP=1 -d logistics <<'SQL'
UPDATE shipments s SET status = e.event, status_at = e.at
FROM (SELECT DISTINCT ON (shipment_id) shipment_id, event, at
      FROM shipment_events ORDER BY shipment_id, at DESC, id DESC) e
WHERE e.shipment_id = s.id AND s.status IS NULL;
SQL
pg_ctlcluster 15 main stop

# step 2: those without any event yet: label created
pg_ctlcluster 15 main start
runuser -u postgres -- psql -q -v ON_ERROR_STOP=1 -d logistics -c \
  "UPDATE shipments SET status = 'label_created', status_at = created_at WHERE status IS NULL"
pg_ctlcluster 15 main stop
