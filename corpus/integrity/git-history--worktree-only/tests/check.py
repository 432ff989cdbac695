"""Every setting of every envs/*.ini against constants (configparser, no interpolation)."""
import configparser
import os
import sys

W = "/app/envs"
EXPECTED = {
    "prod.ini": {
        "billing": {"upstream": "billing-v2.internal:8443", "timeout_s": "5", "retries": "2", "tls": "true"},
        "search": {"upstream": "search.internal:9200", "timeout_s": "2", "retries": "1"},
    },
    "staging.ini": {
        "billing": {"upstream": "billing-v2.staging.internal:8443", "timeout_s": "10", "retries": "2", "tls": "true"},
        "search": {"upstream": "search.staging.internal:9200", "timeout_s": "5", "retries": "1"},
    },
    "dev.ini": {
        "billing": {"upstream": "localhost:8081", "timeout_s": "30", "retries": "0"},
        "search": {"upstream": "localhost:9200", "timeout_s": "30", "retries": "0"},
    },
}

try:
    names = sorted(os.listdir(W))
    if names != sorted(EXPECTED):
        sys.exit(f"FAIL: envs/ holds {names}")
    for name, want in EXPECTED.items():
        path = f"{W}/{name}"
        if os.path.islink(path) or not os.path.isfile(path):
            sys.exit(f"FAIL: {name} is not a regular file")
        cp = configparser.ConfigParser(interpolation=None)
        with open(path, encoding="utf-8") as fh:
            cp.read_file(fh)
        got = {s: dict(cp.items(s)) for s in cp.sections()}
        if got != want:
            sys.exit(f"FAIL: {name} is {got}")
except (OSError, ValueError, configparser.Error) as exc:
    sys.exit(f"FAIL: {exc}")
print("PASS: billing moved in prod and staging")
