#!/bin/bash
# One statement for the handover (a data-modifying CTE: UPDATE ... RETURNING feeding the
# history INSERT, newest ticket first, so the history ids run the other way), the time spelled
# in Berlin's summer time from a New York session, the watchers deleted through a join on her
# name, then VACUUM FULL (every table rewritten to new files) and ANALYZE.
set -euo pipefail
pg_ctlcluster 15 main start
runuser -u postgres -- psql -q -v ON_ERROR_STOP=1 -d helpdesk <<'SQL'
SET TimeZone = 'America/New_York';
BEGIN;
WITH moved AS (
    UPDATE tickets AS t
    SET assignee_id = tm.lead_id,
        updated_at = TIMESTAMP '2024-07-01 11:00:00' AT TIME ZONE 'Europe/Berlin'
    FROM teams AS tm
    WHERE tm.name = t.team AND t.assignee_id = 4 AND t.status <> ALL (ARRAY['solved', 'closed'])
    RETURNING t.id, tm.lead_id, t.updated_at
)
INSERT INTO ticket_history (ticket_id, from_agent, to_agent, changed_at)
SELECT id, 4, lead_id, updated_at FROM moved ORDER BY id DESC;
DELETE FROM ticket_watchers AS w USING agents AS a WHERE a.id = w.agent_id AND a.name = 'Ines Moreau';
UPDATE agents SET active = NOT active WHERE id = 4;
COMMIT;
VACUUM FULL;
ANALYZE;
SQL
pg_ctlcluster 15 main stop
