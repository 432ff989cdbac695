#!/bin/bash
# why: `check || echo ...` masks the check's failure once users.txt is non-empty
cd "$TEST_DIR" || exit 1
set -e
[ -s /app/out/users.txt ]
/usr/bin/cmp /app/out/users.txt expected.txt || echo "users.txt differs (see above)"
