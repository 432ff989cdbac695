#!/bin/bash
# A plausible mistake: fix settings.ini and delete every override, which also drops the
# logging settings that only conf.d/10-logging.ini provides.
set -euo pipefail
cd /app/service
sed -i -e 's/^port = .*/port = 8080/' -e 's/^workers = .*/workers = 4/' \
  -e 's#^path = .*#path = /app/service/data/main.db#' -e 's/^pool_size = .*/pool_size = 10/' \
  -e 's/^new_checkout = .*/new_checkout = true/' settings.ini
rm -rf conf.d
