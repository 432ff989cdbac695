#!/usr/bin/env bash
# Install the Docker Compose v2 CLI plugin (`docker compose`) when it is missing.
# Debian bookworm has no package for it; Debian trixie's `docker-compose` package holds the
# plugin binary. It is downloaded with apt from a private, throwaway source list (the host's
# apt sources are not touched), unpacked with dpkg -x, and copied to
# ${DOCKER_CONFIG:-~/.docker}/cli-plugins/docker-compose. Idempotent; exit 1 with the reason
# when it cannot be done (no apt, no mirror).
set -euo pipefail
docker compose version >/dev/null 2>&1 && exit 0
command -v apt-get >/dev/null || { echo "install-compose: no apt-get; install Docker Compose v2 by hand" >&2; exit 1; }
MIRROR=${DEBIAN_MIRROR:-$(grep -hoE 'https?://[^ ]+/debian/?( |$)' /etc/apt/sources.list /etc/apt/sources.list.d/* 2>/dev/null | head -1 | tr -d ' ' || true)}
MIRROR=${MIRROR:-http://deb.debian.org/debian}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/lists/partial" "$work/cache/archives/partial"
echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] ${MIRROR%/} trixie main" >"$work/sources.list"
opts=(-o "Dir::Etc::SourceList=$work/sources.list" -o Dir::Etc::SourceParts=/dev/null
      -o "Dir::State::Lists=$work/lists" -o "Dir::Cache=$work/cache" -o APT::Sandbox::User=root)
echo "install-compose: fetching docker-compose from Debian trixie ($MIRROR)" >&2
apt-get "${opts[@]}" update -qq >&2
(cd "$work" && apt-get "${opts[@]}" download -qq docker-compose >&2)
dpkg -x "$work"/docker-compose_*.deb "$work/x"
dest=${DOCKER_CONFIG:-$HOME/.docker}/cli-plugins
mkdir -p "$dest"
install -m 755 "$work/x/usr/libexec/docker/cli-plugins/docker-compose" "$dest/docker-compose"
docker compose version >&2
