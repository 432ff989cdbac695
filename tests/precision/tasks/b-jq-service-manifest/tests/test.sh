#!/bin/bash
# Checks /app/manifest.json with jq; the verdict goes to /logs/verifier/reward.txt.
mkdir -p /logs/verifier
JQ=/usr/bin/jq
DOC=/app/manifest.json
EXP=/tests/expected_services.json

check() {
  local what=$1 filter=$2
  if "$JQ" -e --slurpfile exp "$EXP" "$filter" "$DOC" > /dev/null; then
    echo "PASS: $what"
  else
    echo "FAIL: $what"
    ok=0
  fi
}

ok=1
if [ ! -f "$DOC" ]; then
  echo "FAIL: $DOC does not exist"
  ok=0
elif ! "$JQ" -e 'type == "object"' "$DOC" > /dev/null 2>&1; then
  echo "FAIL: $DOC is not a JSON object"
  ok=0
else
  check "services match the enabled services exactly (types included)" \
    '.services == $exp[0]'
  check "start_order lists every enabled service exactly once" \
    '(.start_order | type) == "array"
     and (.start_order | all(.[]; type == "string"))
     and (.start_order | length) == ($exp[0] | length)
     and (.start_order | sort) == ($exp[0] | keys)'
  check "start_order puts every service after its dependencies" \
    '(.start_order | type) == "array"
     and (.start_order | all(.[]; type == "string"))
     and ((.start_order | to_entries | map({key: .value, value: .key}) | from_entries) as $pos
          | all($exp[0] | to_entries[]; .key as $s
                | all(.value.depends_on[]; ($pos[.] != null) and ($pos[$s] != null) and $pos[.] < $pos[$s])))'
fi

if [ "$ok" = 1 ]; then
  echo 1 > /logs/verifier/reward.txt
else
  echo 0 > /logs/verifier/reward.txt
fi
