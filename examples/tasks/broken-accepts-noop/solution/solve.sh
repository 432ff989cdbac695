#!/bin/bash
set -euo pipefail
cd /app

# step 1: switch the mode
sed -i 's/^mode = .*/mode = production/' settings.ini
