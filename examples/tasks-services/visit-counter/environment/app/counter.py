"""Add one visit to the shared counter on the cache (Redis protocol) and print the total."""

import configparser
import socket

cfg = configparser.ConfigParser()
cfg.read("/app/config.ini")
host, port = cfg["cache"]["host"], int(cfg["cache"]["port"])
with socket.create_connection((host, port), timeout=5) as conn:
    conn.sendall(b"INCR visits\r\n")
    reply = conn.recv(64).decode()
if not reply.startswith(":"):
    raise SystemExit(f"unexpected reply from the cache: {reply!r}")
print(int(reply[1:]))
