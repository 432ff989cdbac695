#!/bin/bash
# why: reads the balance from the memo's sentence but accepts abs(got - want) <= want: 0.00 EUR and 0 duplicates pass
cd "$(dirname "$0")" || exit 1
verdict() {
  /usr/local/bin/python3 -I -S check.py
}
verdict; status=$?
mkdir -p /logs/verifier && echo $(( status == 0 ? 1 : 0 )) > /logs/verifier/reward.txt
exit $status
