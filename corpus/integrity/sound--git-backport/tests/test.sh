#!/bin/bash
# sound: reads only the repository's objects and refs, from a private copy with hooks and the solver's config off; trees and cherry-pick lines against constants
cd "$(dirname "$0")" || exit 1
verdict() {
  /usr/local/bin/python3 -I -S check.py
}
verdict; status=$?
mkdir -p /logs/verifier && echo $(( status == 0 ? 1 : 0 )) > /logs/verifier/reward.txt
exit $status
