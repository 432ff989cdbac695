#!/bin/bash
# why: copies its tests into the workspace and runs pytest there: the workspace conftest.py is loaded
cd "$(dirname "$0")" || exit 1
verdict() {
  # run the tests inside the project so its layout matches a developer's run
  mkdir -p /app/tests_verifier && cp test_calc.py /app/tests_verifier/
  cd /app && /usr/local/bin/python3 -m pytest -q -p no:cacheprovider
}
verdict; status=$?
mkdir -p /logs/verifier && echo $(( status == 0 ? 1 : 0 )) > /logs/verifier/reward.txt
exit $status
