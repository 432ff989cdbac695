#!/bin/bash
# sound: absolute tools, a clean environment and a session with role, search_path, TimeZone and DateStyle pinned; pg_catalog's functions, operators, casts, types and aggregates by checksum; the catalog (schemas, relations and their kinds, columns, constraints, indexes; no view, rule, trigger, policy, inheritance, extension or preloaded library) and every row of every table against constants
cd / || exit 1  # nothing is read from the tests' directory, which the cluster's owner cannot enter
PSQL=/usr/lib/postgresql/15/bin/psql

q() {
  # options in the startup packet outrank the database's and the role's own settings
  /usr/sbin/runuser -u postgres -- /usr/bin/env -i PATH=/usr/bin:/bin LC_ALL=C.UTF-8 \
    PGOPTIONS="-c statement_timeout=0 -c lock_timeout=0 -c TimeZone=UTC -c DateStyle=ISO,YMD -c IntervalStyle=postgres -c client_encoding=UTF8" \
    "$PSQL" -X -q -A -t -v ON_ERROR_STOP=1 -h /var/run/postgresql -p 5432 -d helpdesk \
    -c "SET ROLE NONE; SET search_path = ''" -c "$1"
}

# sums LABEL WANT SQL: the sha256 of the query's whole output must be WANT
sums() {
  local got
  got=$(q "$3") || { echo "FAIL: $1: the query failed"; return 1; }
  got=$(printf '%s\n' "$got" | /usr/bin/sha256sum) || return 1
  [ "${got%% *}" = "$2" ] && return 0
  echo "FAIL: $1 differs from PostgreSQL 15's own (sha256 ${got%% *})"
  return 1
}

# check LABEL WANT SQL: the query's whole output must be WANT, byte for byte
check() {
  local got
  got=$(q "$3") || { echo "FAIL: $1: the query failed"; return 1; }
  [ "$got" = "$2" ] && return 0
  echo "FAIL: $1"
  /usr/bin/diff <(printf '%s\n' "$2") <(printf '%s\n' "$got") | /usr/bin/head -n 20
  return 1
}

SERVER='/var/lib/postgresql/15/main|15|postgres|on|off|||'
# PostgreSQL 15's built-in functions, operators, casts, types and aggregates (unchanged in
# minor releases): an overload or a replaced definition in pg_catalog changes a sum
PROC_SUM=309dd4f36be7b6050928f6b14071f8e2a84e627d7bde6d242d617e11bf135277
OPERATOR_SUM=cca0f21c34ccf54dea5faf590516791ab280120bd539f24d9dd70e760016877d
CAST_SUM=e676afc76838265714fe1a15cd6d2fb508764d33bbc5d778d770ce36bcce2ebf
TYPE_SUM=9a2af5885b98048858256f712ddd00cd6882bbdea2c82f9ec59ec789996cc7f6
AGGREGATE_SUM=2d1c67a3c0ceed1b60dc2b499489920ec2c94334b53bcb0d37c28eec04df047b
SCHEMAS='public'
EXTENSIONS='plpgsql'
RELATIONS='agents:r
agents_pkey:i
teams:r
teams_pkey:i
ticket_history:r
ticket_history_id_seq:S
ticket_history_pkey:i
ticket_watchers:r
ticket_watchers_pkey:i
tickets:r
tickets_pkey:i'
COLUMNS='agents|id|integer|true||
agents|name|text|true||
agents|team|text|true||
agents|active|boolean|true|true|
teams|name|text|true||
teams|lead_id|integer|true||
ticket_history|id|bigint|true||d
ticket_history|ticket_id|integer|true||
ticket_history|from_agent|integer|false||
ticket_history|to_agent|integer|false||
ticket_history|changed_at|timestamp with time zone|true||
ticket_watchers|ticket_id|integer|true||
ticket_watchers|agent_id|integer|true||
tickets|id|integer|true||
tickets|subject|text|true||
tickets|team|text|true||
tickets|status|text|true||
tickets|assignee_id|integer|false||
tickets|updated_at|timestamp with time zone|true||'
CONSTRAINTS='agents|agents_pkey|PRIMARY KEY (id)
teams|teams_lead_id_fkey|FOREIGN KEY (lead_id) REFERENCES public.agents(id)
teams|teams_pkey|PRIMARY KEY (name)
ticket_history|ticket_history_from_agent_fkey|FOREIGN KEY (from_agent) REFERENCES public.agents(id)
ticket_history|ticket_history_pkey|PRIMARY KEY (id)
ticket_history|ticket_history_ticket_id_fkey|FOREIGN KEY (ticket_id) REFERENCES public.tickets(id)
ticket_history|ticket_history_to_agent_fkey|FOREIGN KEY (to_agent) REFERENCES public.agents(id)
ticket_watchers|ticket_watchers_agent_id_fkey|FOREIGN KEY (agent_id) REFERENCES public.agents(id)
ticket_watchers|ticket_watchers_pkey|PRIMARY KEY (ticket_id, agent_id)
ticket_watchers|ticket_watchers_ticket_id_fkey|FOREIGN KEY (ticket_id) REFERENCES public.tickets(id)
tickets|tickets_assignee_id_fkey|FOREIGN KEY (assignee_id) REFERENCES public.agents(id)
tickets|tickets_pkey|PRIMARY KEY (id)
tickets|tickets_status_check|CHECK ((status = ANY (ARRAY['\''open'\''::text, '\''pending'\''::text, '\''solved'\''::text, '\''closed'\''::text])))
tickets|tickets_team_fkey|FOREIGN KEY (team) REFERENCES public.teams(name)'
INDEXES='CREATE UNIQUE INDEX agents_pkey ON public.agents USING btree (id)
CREATE UNIQUE INDEX teams_pkey ON public.teams USING btree (name)
CREATE UNIQUE INDEX ticket_history_pkey ON public.ticket_history USING btree (id)
CREATE UNIQUE INDEX ticket_watchers_pkey ON public.ticket_watchers USING btree (ticket_id, agent_id)
CREATE UNIQUE INDEX tickets_pkey ON public.tickets USING btree (id)'
# after the handover: agent 4 inactive, everyone else as seeded
AGENTS='{"id":1,"name":"Ana Silva","team":"billing","active":true}
{"id":2,"name":"Bram Jansen","team":"billing","active":true}
{"id":3,"name":"Chen Wei","team":"tech","active":true}
{"id":4,"name":"Ines Moreau","team":"billing","active":false}
{"id":5,"name":"Jonas Weber","team":"tech","active":true}
{"id":6,"name":"Lea Novak","team":"accounts","active":true}
{"id":7,"name":"Omar Haddad","team":"accounts","active":false}'
TEAMS='{"name":"accounts","lead_id":6}
{"name":"billing","lead_id":2}
{"name":"tech","lead_id":3}'
# 101, 102 (billing) to 2; 105, 112 (tech) to 3; 106 (accounts) to 6; her solved 104 and
# closed 108 stay hers; other agents' and unassigned tickets untouched
TICKETS='{"id":101,"subject":"Invoice shows wrong VAT","team":"billing","status":"open","assignee_id":2,"updated_at":"2024-07-01T09:00:00+00:00"}
{"id":102,"subject":"Refund for double charge","team":"billing","status":"pending","assignee_id":2,"updated_at":"2024-07-01T09:00:00+00:00"}
{"id":103,"subject":"Cannot reset password","team":"tech","status":"open","assignee_id":5,"updated_at":"2024-06-25T10:00:00+00:00"}
{"id":104,"subject":"Update billing address","team":"billing","status":"solved","assignee_id":4,"updated_at":"2024-06-10T09:30:00+00:00"}
{"id":105,"subject":"API rate limit question","team":"tech","status":"pending","assignee_id":3,"updated_at":"2024-07-01T09:00:00+00:00"}
{"id":106,"subject":"Close account request","team":"accounts","status":"open","assignee_id":6,"updated_at":"2024-07-01T09:00:00+00:00"}
{"id":107,"subject":"Export all invoices","team":"billing","status":"open","assignee_id":null,"updated_at":"2024-06-30T07:00:00+00:00"}
{"id":108,"subject":"Merge duplicate accounts","team":"accounts","status":"closed","assignee_id":4,"updated_at":"2024-05-30T12:00:00+00:00"}
{"id":109,"subject":"Webhook retries","team":"tech","status":"open","assignee_id":3,"updated_at":"2024-06-28T13:20:00+00:00"}
{"id":110,"subject":"Card declined at renewal","team":"billing","status":"open","assignee_id":1,"updated_at":"2024-06-26T15:00:00+00:00"}
{"id":111,"subject":"Change account owner","team":"accounts","status":"pending","assignee_id":7,"updated_at":"2024-06-21T09:40:00+00:00"}
{"id":112,"subject":"SSO login loop","team":"tech","status":"open","assignee_id":3,"updated_at":"2024-07-01T09:00:00+00:00"}'
# agent 4's rows (101, 103, 106, 108, 109, 112) gone, the others kept
WATCHERS='101|1
105|5
106|6
110|2
112|3'
OLD_HISTORY='{"id":1,"ticket_id":104,"from_agent":null,"to_agent":4,"changed_at":"2024-06-01T08:00:00+00:00"}
{"id":2,"ticket_id":101,"from_agent":1,"to_agent":4,"changed_at":"2024-06-15T09:00:00+00:00"}
{"id":3,"ticket_id":111,"from_agent":null,"to_agent":7,"changed_at":"2024-06-05T10:00:00+00:00"}'
# one row per reassigned ticket, whatever ids the identity gave them (insertion order is free)
NEW_HISTORY='101|4|2|2024-07-01T09:00:00+00:00
102|4|2|2024-07-01T09:00:00+00:00
105|4|3|2024-07-01T09:00:00+00:00
106|4|6|2024-07-01T09:00:00+00:00
112|4|3|2024-07-01T09:00:00+00:00'

verdict() {
  /usr/bin/pg_ctlcluster 15 main start || { echo "FAIL: the cluster does not start"; return 1; }
  sums "pg_catalog functions" "$PROC_SUM" "SELECT proname, proargtypes, prorettype, prolang, prokind, prosecdef,
      proisstrict, proretset, provolatile, proallargtypes, proargmodes, prosrc, probin, prosqlbody, proconfig
      FROM pg_catalog.pg_proc WHERE pronamespace = 11 ORDER BY proname COLLATE \"C\", proargtypes" || return 1
  sums "pg_catalog operators" "$OPERATOR_SUM" "SELECT oprname, oprkind, oprleft, oprright, oprresult, oprcode::oid
      FROM pg_catalog.pg_operator WHERE oprnamespace = 11 ORDER BY oprname COLLATE \"C\", oprleft, oprright" || return 1
  sums casts "$CAST_SUM" "SELECT castsource, casttarget, castfunc, castcontext, castmethod
      FROM pg_catalog.pg_cast ORDER BY castsource, casttarget" || return 1
  sums "built-in types" "$TYPE_SUM" "SELECT oid, typname, typnamespace, typlen, typbyval, typtype, typinput::oid,
      typoutput::oid, typreceive::oid, typsend::oid, typelem, typbasetype
      FROM pg_catalog.pg_type WHERE oid < 10000 ORDER BY oid" || return 1
  sums aggregates "$AGGREGATE_SUM" "SELECT aggfnoid::oid, aggkind, aggtransfn::oid, aggfinalfn::oid, aggcombinefn::oid,
      aggtranstype, agginitval FROM pg_catalog.pg_aggregate ORDER BY aggfnoid" || return 1
  check server "$SERVER" "SELECT current_setting('data_directory') || '|' || current_setting('server_version_num')::int / 10000
      || '|' || current_user || '|' || current_setting('is_superuser') || '|' || current_setting('allow_system_table_mods') || '|' || current_setting('shared_preload_libraries')
      || '|' || current_setting('session_preload_libraries') || '|' || current_setting('local_preload_libraries')" || return 1
  check schemas "$SCHEMAS" "SELECT nspname FROM pg_catalog.pg_namespace
      WHERE nspname !~ '^pg_' AND nspname <> 'information_schema' ORDER BY nspname COLLATE \"C\"" || return 1
  check extensions "$EXTENSIONS" "SELECT extname FROM pg_catalog.pg_extension ORDER BY extname COLLATE \"C\"" || return 1
  check relations "$RELATIONS" "SELECT relname || ':' || relkind::text FROM pg_catalog.pg_class
      WHERE relnamespace = 'public'::pg_catalog.regnamespace ORDER BY relname COLLATE \"C\"" || return 1
  check columns "$COLUMNS" "SELECT c.relname || '|' || a.attname || '|' || pg_catalog.format_type(a.atttypid, a.atttypmod)
      || '|' || a.attnotnull || '|' || coalesce(pg_catalog.pg_get_expr(d.adbin, d.adrelid), '') || '|' || a.attidentity::text
      FROM pg_catalog.pg_attribute a JOIN pg_catalog.pg_class c ON c.oid = a.attrelid
      LEFT JOIN pg_catalog.pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
      WHERE c.relnamespace = 'public'::pg_catalog.regnamespace AND c.relkind = 'r' AND a.attnum > 0 AND NOT a.attisdropped
      ORDER BY c.relname COLLATE \"C\", a.attnum" || return 1
  check constraints "$CONSTRAINTS" "SELECT c.relname || '|' || k.conname || '|' || pg_catalog.pg_get_constraintdef(k.oid)
      FROM pg_catalog.pg_constraint k JOIN pg_catalog.pg_class c ON c.oid = k.conrelid
      WHERE c.relnamespace = 'public'::pg_catalog.regnamespace ORDER BY c.relname COLLATE \"C\", k.conname COLLATE \"C\"" || return 1
  check indexes "$INDEXES" "SELECT pg_catalog.pg_get_indexdef(i.indexrelid) FROM pg_catalog.pg_index i
      JOIN pg_catalog.pg_class c ON c.oid = i.indexrelid
      WHERE c.relnamespace = 'public'::pg_catalog.regnamespace ORDER BY c.relname COLLATE \"C\"" || return 1
  check "no trigger, rule, policy, inheritance or row security" "0|0|0|0|0" "SELECT
      (SELECT count(*) FROM pg_catalog.pg_trigger WHERE NOT tgisinternal) || '|' ||
      (SELECT count(*) FROM pg_catalog.pg_rewrite r JOIN pg_catalog.pg_class c ON c.oid = r.ev_class
        JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
        WHERE NOT (c.relkind = 'v' AND n.nspname IN ('pg_catalog', 'information_schema'))) || '|' ||
      (SELECT count(*) FROM pg_catalog.pg_policy) || '|' ||
      (SELECT count(*) FROM pg_catalog.pg_inherits) || '|' ||
      (SELECT count(*) FROM pg_catalog.pg_class WHERE relrowsecurity)" || return 1
  check agents "$AGENTS" "SELECT pg_catalog.row_to_json(t)::text FROM ONLY public.agents t ORDER BY t.id" || return 1
  check teams "$TEAMS" "SELECT pg_catalog.row_to_json(t)::text FROM ONLY public.teams t ORDER BY t.name COLLATE \"C\"" || return 1
  check tickets "$TICKETS" "SELECT pg_catalog.row_to_json(t)::text FROM ONLY public.tickets t ORDER BY t.id" || return 1
  check watchers "$WATCHERS" "SELECT ticket_id || '|' || agent_id FROM ONLY public.ticket_watchers
      ORDER BY ticket_id, agent_id" || return 1
  check "old history" "$OLD_HISTORY" "SELECT pg_catalog.row_to_json(t)::text FROM ONLY public.ticket_history t
      WHERE t.id IN (1, 2, 3) ORDER BY t.id" || return 1
  check "new history" "$NEW_HISTORY" "SELECT t.ticket_id || '|' || coalesce(t.from_agent::text, 'null') || '|'
      || coalesce(t.to_agent::text, 'null') || '|' || (pg_catalog.to_json(t.changed_at) #>> '{}')
      FROM ONLY public.ticket_history t WHERE t.id NOT IN (1, 2, 3)
      ORDER BY t.ticket_id, t.from_agent, t.to_agent, t.changed_at" || return 1
  # ids taken from the identity: the sequence's next value is past every id (default inserts
  # still work), whatever order the rows went in
  check "history ids behind the identity" "t" "SELECT (SELECT max(h.id) FROM ONLY public.ticket_history h)
      < (SELECT s.last_value + CASE WHEN s.is_called THEN 1 ELSE 0 END FROM public.ticket_history_id_seq s)" || return 1
  echo "PASS: the handover is exactly right"
}
verdict; status=$?
/usr/bin/pg_ctlcluster 15 main stop > /dev/null 2>&1
mkdir -p /logs/verifier && echo $(( status == 0 ? 1 : 0 )) > /logs/verifier/reward.txt
exit $status
