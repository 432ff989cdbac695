#!/bin/bash
# why: puts '.' (the workspace) on PATH, then runs cmp by name
cd "$(dirname "$0")" || exit 1
verdict() {
  v=$PWD
  cd /srv/data && PATH=".:$PATH"  # the project's helper scripts live at its top level
  cmp -s out/users.txt "$v/expected.txt"
}
verdict; status=$?
mkdir -p /logs/verifier && echo $(( status == 0 ? 1 : 0 )) > /logs/verifier/reward.txt
exit $status
