#!/bin/bash
# why: PYTHONPATH=<workspace> for imports: a *.dist-info there registers a pytest11 plugin that pytest autoloads
cd "$(dirname "$0")" || exit 1
verdict() {
  PYTHONPATH=/home/user/project /usr/local/bin/python3 -m pytest -q -p no:cacheprovider --noconftest \
    --rootdir="$PWD" -c /dev/null test_calc_import.py
}
verdict; status=$?
mkdir -p /logs/verifier && echo $(( status == 0 ? 1 : 0 )) > /logs/verifier/reward.txt
exit $status
