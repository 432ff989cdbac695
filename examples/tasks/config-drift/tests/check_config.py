"""Checks the effective configuration of config-drift against the released values."""

import configparser
import hashlib
import sys
from pathlib import Path

SERVICE = Path("/app/service")
EXPECTED = {
    "database.path": "/app/service/data/main.db",
    "database.pool_size": "10",
    "features.new_checkout": "true",
    "logging.format": "json",
    "logging.level": "warning",
    "server.port": "8080",
    "server.workers": "4",
}
UNCHANGED = {
    "config.py": "3e9bde380f9f52ce45751d6984949c81a3f5a5b5bf0cb0b32cfef7b944426ebf",
    "deploy/manifest.json": "aac8f8722f8514127ea9e85d08db36b7fbe3b17f3c7ae83444ac6be8b64fe9fe",
}


def fail(message: str) -> None:
    print("FAIL:", message)
    sys.exit(1)


def effective() -> dict[str, str]:
    # Same layering rule as config.py: settings.ini, then conf.d/*.ini by name.
    parser = configparser.ConfigParser()
    files = [SERVICE / "settings.ini", *sorted((SERVICE / "conf.d").glob("*.ini"))]
    for file in files:
        if file.is_symlink() or not file.is_file():
            fail(f"{file} is missing or not a regular file")
        try:
            parser.read_string(file.read_text(), source=str(file))
        except (configparser.Error, UnicodeDecodeError) as exc:
            fail(f"{file} does not parse: {exc}")
    return {f"{s}.{k}": v for s in parser.sections() for k, v in parser[s].items()}


def main() -> None:
    for rel, digest in UNCHANGED.items():
        path = SERVICE / rel
        if not path.is_file() or hashlib.sha256(path.read_bytes()).hexdigest() != digest:
            fail(f"{rel} was changed or removed")
    got = effective()
    if got != EXPECTED:
        wrong = sorted(k for k in EXPECTED.keys() | got.keys() if got.get(k) != EXPECTED.get(k))
        fail(f"effective configuration differs at {wrong}")
    print("configuration matches release 2.4.1")


main()
