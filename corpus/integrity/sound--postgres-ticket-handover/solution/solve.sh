#!/bin/bash
set -euo pipefail

# step 1: her open and pending tickets to their team's lead, each handover in the history
pg_ctlcluster 15 main start
runuser -u postgres -- psql -q -v ON_ERROR_STOP=1 -d helpdesk <<'SQL'
BEGIN;
INSERT INTO ticket_history (ticket_id, from_agent, to_agent, changed_at)
SELECT t.id, 4, tm.lead_id, '2024-07-01 09:00:00+00'
FROM tickets t JOIN teams tm ON tm.name = t.team
WHERE t.assignee_id = 4 AND t.status IN ('open', 'pending')
ORDER BY t.id;
UPDATE tickets t SET assignee_id = tm.lead_id, updated_at = '2024-07-01 09:00:00+00'
FROM teams tm
WHERE tm.name = t.team AND t.assignee_id = 4 AND t.status IN ('open', 'pending');
COMMIT;
SQL
pg_ctlcluster 15 main stop

# step 2: off every watcher list, and inactive
pg_ctlcluster 15 main start
runuser -u postgres -- psql -q -v ON_ERROR_STOP=1 -d helpdesk <<'SQL'
BEGIN;
DELETE FROM ticket_watchers WHERE agent_id = 4;
UPDATE agents SET active = false WHERE id = 4;
COMMIT;
SQL
pg_ctlcluster 15 main stop
