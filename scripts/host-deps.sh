#!/usr/bin/env bash
# Install the host tools envfactory needs that a fresh Debian machine lacks, from Debian's
# packages, only when missing (idempotent, quiet when everything is there).
#
# Usage:  scripts/host-deps.sh demo   # debootstrap (the local base image is built with it)
#         scripts/host-deps.sh test   # + postgresql, chromium (review UI browser test), strace,
#                                     #   libatomic1 (playwright's bundled node needs it), nodejs
#                                     #   (the candidate-flood probe's JavaScript program is run)
#                                     #   and the Docker Compose v2 plugin (compose stack test)
# Not root, or no apt: prints what is missing and how to install it, and exits 1.
set -euo pipefail

want=(debootstrap:debootstrap)
if [ "${1:-demo}" = test ]; then
  want+=(initdb:postgresql chromium:chromium strace:strace libatomic.so.1:libatomic1 node:nodejs)
fi

have() {
  case "$1" in
    initdb) ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || command -v initdb >/dev/null ;;
    *.so.*) compgen -G "/usr/lib/*/$1" >/dev/null || compgen -G "/lib/*/$1" >/dev/null ;;
    *) command -v "$1" >/dev/null ;;
  esac
}

if [ "${1:-demo}" = test ] && command -v docker >/dev/null; then
  bash "$(dirname "$0")/install-compose.sh"  # no-op when `docker compose` works
fi

need=()
for pair in "${want[@]}"; do
  have "${pair%%:*}" || need+=("${pair#*:}")
done
[ ${#need[@]} -eq 0 ] && exit 0

if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null; then
  echo "host-deps: missing ${need[*]}; install them with: sudo apt-get install -y ${need[*]}" >&2
  exit 1
fi
log="${TMPDIR:-/tmp}/envfactory-host-deps.log"
echo "host-deps: installing ${need[*]} from Debian's packages (log: $log)" >&2
export DEBIAN_FRONTEND=noninteractive
if ! { apt-get update -qq && apt-get install -y -qq "${need[@]}"; } >"$log" 2>&1; then
  tail -n 30 "$log" >&2
  echo "host-deps: installing ${need[*]} failed (full log: $log)" >&2
  exit 1
fi
