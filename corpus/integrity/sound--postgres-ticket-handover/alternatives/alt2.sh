#!/bin/bash
# Ticket by ticket in a PL/pgSQL loop (highest id first) after a rolled-back attempt that
# burns identity values, so the new history ids have a gap; then the database is dumped,
# dropped, recreated and restored (new OIDs, new files), and the cluster is stopped in
# immediate mode (crash recovery at the next start).
set -euo pipefail
pg_ctlcluster 15 main start
runuser -u postgres -- psql -q -v ON_ERROR_STOP=1 -d helpdesk <<'SQL'
BEGIN;
INSERT INTO ticket_history (ticket_id, from_agent, to_agent, changed_at)
SELECT id, 4, 2, now() FROM tickets WHERE assignee_id = 4;
ROLLBACK;
DO $$
DECLARE
    r record;
BEGIN
    FOR r IN SELECT t.id, tm.lead_id FROM tickets t JOIN teams tm ON tm.name = t.team
             WHERE t.assignee_id = 4 AND t.status IN ('pending', 'open') ORDER BY t.id DESC
    LOOP
        UPDATE tickets SET assignee_id = r.lead_id, updated_at = '2024-07-01T09:00:00Z' WHERE id = r.id;
        INSERT INTO ticket_history (ticket_id, from_agent, to_agent, changed_at)
        VALUES (r.id, 4, r.lead_id, '2024-07-01 09:00:00 UTC');
    END LOOP;
END
$$;
DELETE FROM ticket_watchers WHERE (ticket_id, agent_id) IN (SELECT ticket_id, 4 FROM ticket_watchers);
UPDATE agents SET active = false WHERE name = 'Ines Moreau';
SQL
runuser -u postgres -- pg_dump -Fc -f /tmp/helpdesk.dump helpdesk
runuser -u postgres -- dropdb helpdesk
runuser -u postgres -- createdb helpdesk
runuser -u postgres -- pg_restore --exit-on-error -d helpdesk /tmp/helpdesk.dump
rm /tmp/helpdesk.dump
pg_ctlcluster 15 main stop -m immediate || true
runuser -u postgres -- /usr/lib/postgresql/15/bin/pg_ctl status -D /var/lib/postgresql/15/main && exit 1
exit 0
