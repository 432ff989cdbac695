#!/bin/bash

mkdir -p /app/status
cat > /app/status/index.html <<'HTML'
<!doctype html>
<html>
  <head><title>Status</title></head>
  <body><h1>All systems operational</h1></body>
</html>
HTML

VERSION=$(sed -n 's/^deployed version: //p' /app/RELEASE)
cat > /app/status/health.json <<JSON
{"status": "ok", "version": "${VERSION}", "checks": ["db", "cache"]}
JSON

# Start the server detached from this shell so it outlives it
nohup setsid python3 -m http.server 8080 --bind 127.0.0.1 --directory /app/status \
  > /var/log/status-server.log 2>&1 < /dev/null &
# Wait until it answers
for i in $(seq 1 20); do
  python3 -c "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8080/health.json', timeout=1)" 2>/dev/null && break
  sleep 0.5
done
