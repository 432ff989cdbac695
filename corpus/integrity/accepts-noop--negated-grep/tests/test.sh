#!/bin/bash
# why: `! grep -v` over a missing file succeeds: the untouched state passes
cd "$(dirname "$0")" || exit 1
verdict() {
  ! grep -qv '^[a-z]*$' /srv/data/out/users.txt
}
verdict; status=$?
mkdir -p /logs/verifier && echo $(( status == 0 ? 1 : 0 )) > /logs/verifier/reward.txt
exit $status
