#!/bin/bash
# Build every image the compose stack needs, locally (no registry can be reached):
#   1. the envfactory base image (debootstrap from the host's Debian mirror, once, cached);
#   2. tag it envfactory/compose-base:latest for the Dockerfiles in docker/;
#   3. `docker compose build`.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-.venv/bin/python}
base=$("$PY" -c 'from sandboxes import DockerEngine; from envfactory.core.settings import load_settings; print(DockerEngine(load_settings().sandbox).ensure_base_image("python"))')
docker tag "$base" envfactory/compose-base:latest
echo "base image: $base -> envfactory/compose-base:latest"
# the compose file requires a password to run the stack; building needs none
POSTGRES_PASSWORD=${POSTGRES_PASSWORD:-unused-at-build} docker compose build "$@"
