#!/bin/bash
# why: checks the statuses of the shipments that were NULL against constants, never the shipments that already had one: a backfill that also overwrites the hand-set 'lost' and 'returned' passes
cd "$(dirname "$0")" || exit 1
verdict() {
  local got
  pg_ctlcluster 15 main start || { echo "FAIL: the cluster does not start"; return 1; }
  q() { runuser -u postgres -- psql -X -q -At -v ON_ERROR_STOP=1 -d logistics -c "SET TimeZone = 'UTC'" -c "$1"; }
  got=$(q "SELECT string_agg(column_name || ':' || data_type, ',' ORDER BY column_name)
           FROM information_schema.columns WHERE table_schema = 'public' AND table_name = 'shipments'") || return 1
  [ "$got" = "carrier:text,created_at:timestamp with time zone,id:integer,status:text,status_at:timestamp with time zone,tracking_no:text" ] \
    || { echo "FAIL: columns $got"; return 1; }
  got=$(q "SELECT count(*) FROM shipments") || return 1
  [ "$got" = 10 ] || { echo "FAIL: $got shipments"; return 1; }
  # the shipments the importer left without a status
  got=$(q "SELECT string_agg(id || ':' || coalesce(status, 'NULL') || ':'
                  || coalesce(to_char(status_at, 'YYYY-MM-DD HH24:MI:SS'), 'NULL'), ',' ORDER BY id)
           FROM shipments WHERE id IN (3, 4, 5, 7, 8, 10)") || return 1
  [ "$got" = "3:delivered:2024-05-13 14:45:00,4:out_for_delivery:2024-05-13 09:00:00,5:label_created:2024-05-12 11:00:00,7:delivered:2024-05-16 10:00:00,8:picked_up:2024-05-15 17:00:00,10:label_created:2024-05-16 15:00:00" ] \
    || { echo "FAIL: backfilled statuses $got"; return 1; }
}
verdict; status=$?
pg_ctlcluster 15 main stop > /dev/null 2>&1
mkdir -p /logs/verifier && echo $(( status == 0 ? 1 : 0 )) > /logs/verifier/reward.txt
exit $status
