#!/bin/bash
# Two visits against the fresh cache of this verification: the counter must print 1 then
# 2, and the cache itself must hold 2 (asked directly, not through the counter).
set -e
test "$(python3 /app/counter.py)" = 1
test "$(python3 /app/counter.py)" = 2
python3 - <<'PY'
import socket
with socket.create_connection(("cache", 6379), timeout=5) as conn:
    conn.sendall(b"GET visits\r\n")
    reply = conn.recv(64)
assert reply == b"$1\r\n2\r\n", reply
PY
