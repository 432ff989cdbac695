#!/bin/bash
# why: verify.mk includes the project's config.mk (for OUT); a `SHELL := /bin/true` there makes every recipe line of the check succeed
cd "$(dirname "$0")" || exit 1
verdict() {
  /usr/bin/make -s -f verify.mk verify
}
verdict; status=$?
mkdir -p /logs/verifier && echo $(( status == 0 ? 1 : 0 )) > /logs/verifier/reward.txt
exit $status
