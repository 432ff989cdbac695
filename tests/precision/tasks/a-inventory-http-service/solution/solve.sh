#!/bin/bash
set -euo pipefail

cat > /app/server.py <<'PY'
#!/usr/bin/env python3
"""Small stock service: see the task description for the API."""
import json
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

INVENTORY_FILE = "/app/data/inventory.json"
LOCK = threading.Lock()


def load_stock():
    with open(INVENTORY_FILE) as fh:
        data = json.load(fh)
    return {item["sku"]: {"sku": item["sku"], "name": item["name"], "qty": int(item["qty"])}
            for item in data["items"]}


STOCK = load_stock()
ITEM = re.compile(r"^/items/([^/]+)$")
RESERVE = re.compile(r"^/items/([^/]+)/reserve$")


class Handler(BaseHTTPRequestHandler):
    def send_json(self, status, obj):
        body = json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        url = urlsplit(self.path)
        if url.path == "/health":
            return self.send_json(200, {"status": "ok"})
        m = ITEM.match(url.path)
        if m:
            with LOCK:
                item = STOCK.get(m.group(1))
                item = dict(item) if item else None
            if item is None:
                return self.send_json(404, {"error": "not found"})
            return self.send_json(200, item)
        if url.path == "/low-stock":
            raw = parse_qs(url.query).get("threshold", [None])[0]
            try:
                threshold = int(raw)
            except (TypeError, ValueError):
                return self.send_json(400, {"error": "threshold must be an integer"})
            with LOCK:
                skus = sorted(s for s, it in STOCK.items() if it["qty"] < threshold)
            return self.send_json(200, {"skus": skus})
        return self.send_json(404, {"error": "not found"})

    def do_POST(self):
        url = urlsplit(self.path)
        m = RESERVE.match(url.path)
        if not m:
            return self.send_json(404, {"error": "not found"})
        length = int(self.headers.get("Content-Length") or 0)
        try:
            body = json.loads(self.rfile.read(length) or b"null")
            qty = body["qty"]
            if isinstance(qty, bool) or not isinstance(qty, int) or qty <= 0:
                raise ValueError
        except (ValueError, KeyError, TypeError):
            return self.send_json(400, {"error": "qty must be a positive integer"})
        with LOCK:
            item = STOCK.get(m.group(1))
            if item is None:
                return self.send_json(404, {"error": "not found"})
            if item["qty"] < qty:
                return self.send_json(409, {"error": "insufficient stock"})
            item["qty"] -= qty
            remaining = item["qty"]
        return self.send_json(200, {"sku": m.group(1), "qty": remaining})

    def log_message(self, fmt, *args):
        pass


if __name__ == "__main__":
    ThreadingHTTPServer(("127.0.0.1", 8765), Handler).serve_forever()
PY
# smoke test, then stop the server again
python3 /app/server.py & pid=$!
for i in $(seq 1 50); do
  python3 -c "import urllib.request; print(urllib.request.urlopen('http://127.0.0.1:8765/health', timeout=1).read().decode())" 2>/dev/null && break
  sleep 0.1
done
kill "$pid"
wait "$pid" 2>/dev/null || true
