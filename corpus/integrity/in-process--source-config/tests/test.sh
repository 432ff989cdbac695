#!/bin/bash
# why: sources the workspace's config.env to find the output dir; the solver's shell code runs in the verifier
cd "$(dirname "$0")" || exit 1
verdict() {
  . /srv/data/config.env  # OUT_DIR: where the project writes its outputs
  [ -s "$OUT_DIR/summary.json" ] && /usr/local/bin/python3 -I -S check.py
}
verdict; status=$?
mkdir -p /logs/verifier && echo $(( status == 0 ? 1 : 0 )) > /logs/verifier/reward.txt
exit $status
