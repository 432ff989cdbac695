#!/bin/bash
set -euo pipefail
cd /app/service

# step 1: bring settings.ini to the released values
cat > settings.ini <<'INI'
[server]
port = 8080
workers = 4

[database]
path = /app/service/data/main.db
pool_size = 10

[features]
new_checkout = true
INI

# step 2: retire the incident hotfix that still overrides port and new_checkout
rm conf.d/90-hotfix.ini
