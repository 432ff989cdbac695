"""Queries the stock service started by test.sh and checks the response bodies.
test.sh loaded tests/hidden_inventory.json into /app/data/inventory.json first."""
import json
import sys
import time
import urllib.error
import urllib.request

BASE = "http://127.0.0.1:8765"
failures = []


def request(method, path, body=None):
    data = None
    headers = {}
    if body is not None:
        data = json.dumps(body).encode()
        headers["Content-Type"] = "application/json"
    req = urllib.request.Request(BASE + path, data=data, method=method, headers=headers)
    try:
        with urllib.request.urlopen(req, timeout=5) as resp:
            status, ctype, raw = resp.status, resp.headers.get("Content-Type", ""), resp.read()
    except urllib.error.HTTPError as err:
        status, ctype, raw = err.code, err.headers.get("Content-Type", ""), err.read()
    try:
        parsed = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        parsed = ("<not JSON>", raw[:200])
    return status, ctype, parsed


def expect(label, got, want_status, want_body=None, error_key=False, ctype=True):
    status, content_type, body = got
    if status != want_status:
        failures.append(f"{label}: status {status}, expected {want_status} (body {body!r})")
        return
    if ctype and not content_type.split(";")[0].strip().lower() == "application/json":
        failures.append(f"{label}: Content-Type {content_type!r}, expected application/json")
    if want_body is not None:
        if isinstance(want_body, dict) and isinstance(body, dict):
            sub = {k: body.get(k, "<missing>") for k in want_body}
            if sub != want_body:
                failures.append(f"{label}: body {body!r}, expected {want_body!r}")
        elif body != want_body:
            failures.append(f"{label}: body {body!r}, expected {want_body!r}")
    if error_key and not (isinstance(body, dict) and "error" in body):
        failures.append(f"{label}: body {body!r} has no \"error\" key")


def wait_up():
    deadline = time.time() + 15
    while time.time() < deadline:
        try:
            return request("GET", "/health")
        except (urllib.error.URLError, ConnectionError, OSError):
            time.sleep(0.2)
    return None


def main():
    health = wait_up()
    if health is None:
        print("FAIL: server did not answer on 127.0.0.1:8765 within 15 s")
        return 1
    expect("GET /health", health, 200, {"status": "ok"})
    if isinstance(health[2], dict) and health[2] != {"status": "ok"}:
        failures.append(f"GET /health: body {health[2]!r}")

    expect("GET /items/GEAR-12", request("GET", "/items/GEAR-12"), 200,
           {"sku": "GEAR-12", "name": "Spur gear, 12 teeth", "qty": 9})
    expect("GET /items/DWL-6", request("GET", "/items/DWL-6"), 200,
           {"sku": "DWL-6", "name": "Dübel 6 mm", "qty": 2})
    expect("GET /items/NUT-M6 (not in this inventory)", request("GET", "/items/NUT-M6"), 404,
           {"error": "not found"})

    expect("GET /low-stock?threshold=5", request("GET", "/low-stock?threshold=5"), 200,
           {"skus": ["CLP-3", "DWL-6"]})
    expect("GET /low-stock?threshold=10", request("GET", "/low-stock?threshold=10"), 200,
           {"skus": ["AXL-100", "CLP-3", "DWL-6", "GEAR-12"]})
    expect("GET /low-stock?threshold=0", request("GET", "/low-stock?threshold=0"), 200,
           {"skus": []})
    expect("GET /low-stock (no threshold)", request("GET", "/low-stock"), 400, error_key=True)
    expect("GET /low-stock?threshold=lots", request("GET", "/low-stock?threshold=lots"), 400,
           error_key=True)

    expect("POST reserve GEAR-12 x4", request("POST", "/items/GEAR-12/reserve", {"qty": 4}), 200,
           {"sku": "GEAR-12", "qty": 5})
    expect("GET /items/GEAR-12 after reserve", request("GET", "/items/GEAR-12"), 200,
           {"sku": "GEAR-12", "name": "Spur gear, 12 teeth", "qty": 5})
    expect("POST reserve GEAR-12 x6 (only 5 left)",
           request("POST", "/items/GEAR-12/reserve", {"qty": 6}), 409,
           {"error": "insufficient stock"})
    expect("GET /items/GEAR-12 after refused reserve", request("GET", "/items/GEAR-12"), 200,
           {"qty": 5})
    expect("POST reserve GEAR-12 x1", request("POST", "/items/GEAR-12/reserve", {"qty": 1}), 200,
           {"sku": "GEAR-12", "qty": 4})
    expect("GET /low-stock?threshold=5 after reserves", request("GET", "/low-stock?threshold=5"),
           200, {"skus": ["CLP-3", "DWL-6", "GEAR-12"]})
    expect("POST reserve qty 0", request("POST", "/items/BRG-608/reserve", {"qty": 0}), 400,
           error_key=True)
    expect("POST reserve qty -2", request("POST", "/items/BRG-608/reserve", {"qty": -2}), 400,
           error_key=True)
    expect("GET /items/BRG-608 after invalid reserves", request("GET", "/items/BRG-608"), 200,
           {"qty": 31})
    expect("POST reserve unknown sku", request("POST", "/items/NOPE-1/reserve", {"qty": 1}), 404,
           {"error": "not found"})
    expect("POST reserve CLP-3 x1 (none in stock)",
           request("POST", "/items/CLP-3/reserve", {"qty": 1}), 409,
           {"error": "insufficient stock"})

    for f in failures:
        print("FAIL:", f)
    if failures:
        return 1
    print("PASS")
    return 0


sys.exit(main())
