import json
import time
import urllib.request
from pathlib import Path

BASE = "http://127.0.0.1:8080"


def _get(path):
    last = None
    for _ in range(5):
        try:
            with urllib.request.urlopen(BASE + path, timeout=3) as resp:
                return resp.status, resp.read().decode()
        except OSError as exc:
            last = exc
            time.sleep(1)
    raise AssertionError(f"nothing answers on {BASE}{path}: {last}")


def test_files_in_place():
    """The status directory holds both files."""
    assert Path("/app/status/index.html").is_file()
    assert Path("/app/status/health.json").is_file()


def test_server_process_running():
    """An HTTP server process is still alive."""
    cmdlines = []
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit():
            try:
                cmdlines.append((proc / "cmdline").read_bytes().replace(b"\0", b" ").decode())
            except OSError:
                continue
    assert any("8080" in c for c in cmdlines), "no process mentions port 8080"


def test_index_served():
    """The index page is served with the operational message."""
    status, body = _get("/index.html")
    assert status == 200
    assert "All systems operational" in body


def test_health_served():
    """health.json is served and reports the deployed version."""
    status, body = _get("/health.json")
    assert status == 200
    assert json.loads(body) == {"status": "ok", "version": "1.4.2", "checks": ["db", "cache"]}
