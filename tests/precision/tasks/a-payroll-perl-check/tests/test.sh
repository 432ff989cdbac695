#!/bin/bash
# Perl verifier: core Perl only, clean environment (no PERL5LIB / PERL5OPT), absolute path.
mkdir -p /logs/verifier
cd /tests
if env -i PATH=/usr/bin:/bin /usr/bin/perl /tests/check_payroll.pl; then
  echo 1 > /logs/verifier/reward.txt
else
  echo 0 > /logs/verifier/reward.txt
fi
exit 0
