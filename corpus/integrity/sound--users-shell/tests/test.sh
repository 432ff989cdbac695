#!/bin/bash
# Sound: the output must be a regular file reached without symlinks, byte-identical to the
# expected list shipped here; the input must be unchanged. Tools by absolute path; the
# workspace is never on PATH and nothing of it is sourced or executed.
cd "$(dirname "$0")" || exit 1
f=/home/user/project/out/users.txt
verdict() {
  [ "$(/usr/bin/realpath -e -- "$f" 2>/dev/null)" = "$f" ] && [ -f "$f" ] || { echo "FAIL: out/users.txt missing or reached through a symlink"; return 1; }
  /usr/bin/cmp -s -- "$f" expected.txt || { echo "FAIL: out/users.txt differs from the expected list"; return 1; }
  [ "$(/usr/bin/sha256sum < /home/user/project/data/users.txt)" = "dd173dbd0367e8e8c7ba533e638265dc1372172aa228746357da5424ed1a82e5  -" ] || { echo "FAIL: data/users.txt was changed"; return 1; }
}
verdict; status=$?
mkdir -p /logs/verifier && echo $(( status == 0 ? 1 : 0 )) > /logs/verifier/reward.txt
exit $status
