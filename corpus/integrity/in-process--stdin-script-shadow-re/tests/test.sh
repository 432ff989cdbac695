#!/bin/bash
# why: feeds the check to python on stdin from the workspace, so sys.path[0] is the workspace: re.py shadows re
cd "$(dirname "$0")" || exit 1
verdict() {
  v=$PWD
  cd /home/user/project && /usr/local/bin/python3 - < "$v/check.py"
}
verdict; status=$?
mkdir -p /logs/verifier && echo $(( status == 0 ? 1 : 0 )) > /logs/verifier/reward.txt
exit $status
