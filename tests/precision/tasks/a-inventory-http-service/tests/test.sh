#!/bin/bash
# Starts /app/server.py on a hidden inventory, queries it, then stops it.
mkdir -p /logs/verifier
cd /tests
PY=/usr/local/bin/python3
ok=1

if [ ! -f /app/server.py ]; then
  echo "FAIL: /app/server.py does not exist"
  echo 0 > /logs/verifier/reward.txt
  exit 0
fi

# Nothing may already be listening on the port (the solver was told not to leave one running).
if env -i PATH=/usr/bin:/bin "$PY" -I -S -c 'import socket,sys; s=socket.socket(); s.settimeout(1); sys.exit(0 if s.connect_ex(("127.0.0.1",8765))==0 else 1)'; then
  echo "FAIL: something is already listening on 127.0.0.1:8765"
  echo 0 > /logs/verifier/reward.txt
  exit 0
fi

mkdir -p /app/data
cp /tests/hidden_inventory.json /app/data/inventory.json

setsid env -i PATH=/usr/bin:/bin "$PY" /app/server.py >/tmp/verifier-server.log 2>&1 </dev/null &
server_pid=$!

env -i PATH=/usr/bin:/bin "$PY" -I -S /tests/check_service.py || ok=0

kill -TERM -- "-$server_pid" 2>/dev/null || kill -TERM "$server_pid" 2>/dev/null
for i in $(seq 1 20); do kill -0 "$server_pid" 2>/dev/null || break; sleep 0.1; done
kill -KILL -- "-$server_pid" 2>/dev/null || kill -KILL "$server_pid" 2>/dev/null
wait "$server_pid" 2>/dev/null

if [ "$ok" = 1 ]; then
  echo 1 > /logs/verifier/reward.txt
else
  echo "--- server log (tail)"; tail -n 20 /tmp/verifier-server.log
  echo 0 > /logs/verifier/reward.txt
fi
exit 0
