#!/bin/bash
# why: checks which lines and invoices differ from the seeded rows (by a hash of each row) and that no other row does, never the new rates, VAT amounts or status: any change to exactly the right rows passes
cd "$(dirname "$0")" || exit 1
verdict() {
  local got
  pg_ctlcluster 15 main start || { echo "FAIL: the cluster does not start"; return 1; }
  q() { runuser -u postgres -- psql -X -q -At -v ON_ERROR_STOP=1 -d billing -c "SET DateStyle = 'ISO, YMD'" -c "$1"; }
  got=$(q "SELECT string_agg(table_name || '.' || column_name || ':' || data_type, ',' ORDER BY table_name, column_name)
           FROM information_schema.columns WHERE table_schema = 'public'") || return 1
  [ "$got" = "invoice_lines.description:text,invoice_lines.id:integer,invoice_lines.invoice_id:integer,invoice_lines.net_cents:bigint,invoice_lines.vat_cents:bigint,invoice_lines.vat_rate:numeric,invoices.country:character,invoices.customer:text,invoices.id:integer,invoices.invoice_no:text,invoices.issued_on:date,invoices.status:text" ] \
    || { echo "FAIL: columns $got"; return 1; }
  # the seeded lines, one hash per row: the corrected ones must differ, the others not
  got=$(q "WITH seed(id, h) AS (VALUES
             (1, 'a7d463d77d7aea4c9ebba50ef4fb5ee3'), (2, 'ffded9de7a5c01db5ebc10ccc859b7ed'),
             (3, '425cba1ee023022b1486f4300c8d6e84'), (4, 'c6a46c1f48a6ca24ee34ab5cb6c70131'),
             (5, 'efa3828f720bd76397eab9d2665410cf'), (6, 'f1b30da507f400736211461fe4aff95e'),
             (7, '3d82ff89d4edd5e85e39ab0e34c7b786'), (8, '4e6b16081f12d5b6822b3678427e4f3d'),
             (9, 'fae5b9ca0a03b21f62df7e7446278caa'), (10, 'd3d288dd553e9f021825bd70a09fc6b1'),
             (11, '29e94743812d66eb906c73eba60a7dd1'), (12, '098ca7fa3b415914c96afd1226ae9af8'),
             (13, '48cc64b250caf8d2ceb8cd544e9c2ed0'))
           SELECT count(*) || '|' || coalesce(string_agg(l.id::text, ',' ORDER BY l.id)
                    FILTER (WHERE s.h IS DISTINCT FROM md5(l::text)), '')
           FROM invoice_lines l LEFT JOIN seed s ON s.id = l.id") || return 1
  [ "$got" = "13|2,3,5,6,7,10" ] || { echo "FAIL: lines changed $got"; return 1; }
  got=$(q "WITH seed(id, h) AS (VALUES
             (1, '26379c3db2b582df0925367dc1496ecf'), (2, '6f962a6e34dbd4ba22182a26f111189d'),
             (3, '39d1cdd5ef6d5eeb0e495656b2454212'), (4, '7c702988868584cd70d2b3e262880c95'),
             (5, '2a257fb0067c5dbe71af74bb821cba84'), (6, '115256d6f3d2017b29f83a5d80589f8c'),
             (7, 'efac2087fe392075e4617d704acb3cad'), (8, 'bf17a443d77290458bb24513367fa4be'),
             (9, '5ea7b6396589ea23385c76a032665fbc'))
           SELECT count(*) || '|' || coalesce(string_agg(i.id::text, ',' ORDER BY i.id)
                    FILTER (WHERE s.h IS DISTINCT FROM md5(i::text)), '')
           FROM invoices i LEFT JOIN seed s ON s.id = i.id") || return 1
  [ "$got" = "9|2,4,5,7" ] || { echo "FAIL: invoices changed $got"; return 1; }
}
verdict; status=$?
pg_ctlcluster 15 main stop > /dev/null 2>&1
mkdir -p /logs/verifier && echo $(( status == 0 ? 1 : 0 )) > /logs/verifier/reward.txt
exit $status
