#!/usr/bin/env python3
"""Rotate oversized log files.

Run from cron as `python3 /app/rotate.py`.
TODO: the settings below are hardcoded; ops wants them in /app/rotate.ini.
"""
import os

LOG_DIR = "/app/logs"
SUFFIX = ".log"
MAX_BYTES = 1024
KEEP = 5


def rotate(path, keep):
    oldest = f"{path}.{keep}"
    if os.path.exists(oldest):
        os.remove(oldest)
    for i in range(keep - 1, 0, -1):
        src = f"{path}.{i}"
        if os.path.exists(src):
            os.rename(src, f"{path}.{i + 1}")
    os.rename(path, f"{path}.1")
    open(path, "w").close()


def main():
    for name in sorted(os.listdir(LOG_DIR)):
        path = os.path.join(LOG_DIR, name)
        if name.endswith(SUFFIX) and os.path.isfile(path) and os.path.getsize(path) >= MAX_BYTES:
            rotate(path, KEEP)


if __name__ == "__main__":
    main()
