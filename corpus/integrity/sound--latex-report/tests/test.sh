#!/bin/bash
# sound: compares report.tex (read without following symlinks) with the expected document modulo what TeX ignores, then builds it alone in a private directory as nobody and finds every figure in the PDF
cd "$(dirname "$0")" || exit 1
verdict() {
  /usr/bin/python3 -I -S check.py
}
verdict; status=$?
mkdir -p /logs/verifier && echo $(( status == 0 ? 1 : 0 )) > /logs/verifier/reward.txt
exit $status
