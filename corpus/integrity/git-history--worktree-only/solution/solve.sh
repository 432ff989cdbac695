#!/bin/bash
set -euo pipefail
cd /app

# step 1: point prod and staging billing at billing-v2 over TLS
sed -i 's/^upstream = billing.internal:8080$/upstream = billing-v2.internal:8443\ntls = true/' envs/prod.ini
sed -i 's/^upstream = billing.staging.internal:8080$/upstream = billing-v2.staging.internal:8443\ntls = true/' envs/staging.ini

# step 2: commit on main
git commit -q -am "config: move billing to billing-v2 (TLS)"
