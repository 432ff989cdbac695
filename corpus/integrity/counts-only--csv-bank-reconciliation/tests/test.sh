#!/bin/bash
# why: counts the invoices that changed and checks each looks settled (paid, a June date, a bank reference), never which invoices: any five open ones marked paid pass
cd "$(dirname "$0")" || exit 1
verdict() {
  /usr/local/bin/python3 -I -S check.py
}
verdict; status=$?
mkdir -p /logs/verifier && echo $(( status == 0 ? 1 : 0 )) > /logs/verifier/reward.txt
exit $status
