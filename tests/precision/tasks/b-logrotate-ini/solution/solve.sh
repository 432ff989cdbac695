#!/bin/bash
set -e
cd /app

# Replace the hardcoded settings with values read from /app/rotate.ini on every run
/usr/local/bin/python3 - <<'PY'
from pathlib import Path
p = Path("/app/rotate.py")
t = p.read_text()
t = t.replace('''import os

LOG_DIR = "/app/logs"
SUFFIX = ".log"
MAX_BYTES = 1024
KEEP = 5
''', '''import configparser
import os

DEFAULT_CONFIG = "/app/rotate.ini"


def load_settings(path):
    parser = configparser.ConfigParser()
    with open(path) as f:
        parser.read_file(f)
    section = parser["rotate"]
    return (section["directory"], section["suffix"],
            section.getint("max_bytes"), section.getint("keep"))
''')
t = t.replace('''def main():
    for name in sorted(os.listdir(LOG_DIR)):
        path = os.path.join(LOG_DIR, name)
        if name.endswith(SUFFIX) and os.path.isfile(path) and os.path.getsize(path) >= MAX_BYTES:
            rotate(path, KEEP)''', '''def main():
    log_dir, suffix, max_bytes, keep = load_settings(DEFAULT_CONFIG)
    for name in sorted(os.listdir(log_dir)):
        path = os.path.join(log_dir, name)
        if name.endswith(suffix) and os.path.isfile(path) and os.path.getsize(path) >= max_bytes:
            rotate(path, keep)''')
p.write_text(t)
PY

# Honour ROTATE_CONFIG and rotate only files strictly larger than max_bytes
sed -i 's|load_settings(DEFAULT_CONFIG)|load_settings(os.environ.get("ROTATE_CONFIG") or DEFAULT_CONFIG)|; s|os.path.getsize(path) >= max_bytes|os.path.getsize(path) > max_bytes|' /app/rotate.py
grep -n 'ROTATE_CONFIG\|> max_bytes' /app/rotate.py
/usr/local/bin/python3 /app/rotate.py
ls -l /app/logs
