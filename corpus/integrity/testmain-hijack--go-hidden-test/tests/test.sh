#!/bin/bash
# why: compiles the hidden test into the solver's package and trusts `go test`'s status: a TestMain in that package decides it (os.Exit(0) runs no test)
cd "$(dirname "$0")" || exit 1
verdict() {
  cp split_hidden_test.go /app/money/ || return 1
  cd /app && HOME=/tmp GOCACHE=/var/cache/go-build GOFLAGS=-mod=mod GOPROXY=off \
    /usr/bin/go test -count=1 ./money/
}
verdict; status=$?
mkdir -p /logs/verifier && echo $(( status == 0 ? 1 : 0 )) > /logs/verifier/reward.txt
exit $status
