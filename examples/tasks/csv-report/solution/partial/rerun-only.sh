#!/bin/bash
# A plausible mistake: re-run the ETL without looking at why numbers were low.
set -euo pipefail
cd /app
python3 etl.py
