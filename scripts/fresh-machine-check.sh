#!/usr/bin/env bash
# Check the README's two commands the way a newcomer would: a fresh clone in a clean
# Debian 12 container that talks to this host's Docker engine, then `make demo` and
# `make test`, and a summary (examples published; tests passed / failed / skipped, and
# why each skip happened: a skip for a missing tool is a failure of this check).
#
# The image is built here, without a registry: debootstrap --variant=minbase from the
# host's Debian mirror plus what a fresh Debian machine with Docker has for this job
# (FRESH_PACKAGES below), and the host's extra CA certificates (this network intercepts
# https), then `docker import`. No venv, no debootstrap, no PostgreSQL, no chromium.
#
# The clone lives at the same absolute path inside and outside the container (a
# /tmp/fresh-XXXX directory bind-mounted onto itself), so any path handed to the host's
# engine means the same files on both sides. Host networking, the host's Docker socket.
#
# `--pid host`: sandboxes are owned by `hostname:pid`, and with host networking the
# container has the host's name, so the janitors on both sides must see the same pids.
# PG_TEST_PORT: a free port for the throwaway PostgreSQL (the host's 55432 may be taken).
# debootstrap (the base images; the rebuild test builds one) mounts /proc and makes and
# opens device nodes, as a fresh machine's root can: the container gets SYS_ADMIN and every
# device (`--privileged` is refused by this engine: it cannot grant all capabilities), and
# its /tmp and /var/tmp are host directories, because the container's own root is mounted
# nodev (envfactory builds base images under /var/tmp, the tests under /tmp).
#
# Usage:  scripts/fresh-machine-check.sh                 # image, clone, demo, test, summary
#         STEPS=demo scripts/fresh-machine-check.sh      # only some steps ("install", "demo", "test")
#         PARALLEL=1 ...                                 # demo and test at once, after the install
#         SOURCE=/path/to/repo BRANCH=main scripts/fresh-machine-check.sh
#         KEEP=1 ...                                     # keep the work directory
#         PYTEST_ARGS="tests/api -x" STEPS="install test" ...   # some tests only
#         scripts/fresh-machine-check.sh --summary /tmp/fresh-XXXX   # summarise its logs again
# Needs: root, debootstrap and docker on the host. Logs: $WORK/{image,demo,test}.log.
set -euo pipefail

HERE="$(cd "$(dirname "$0")/.." && pwd)"
SOURCE="${SOURCE:-$HERE}"
BRANCH="${BRANCH:-$(git -C "$SOURCE" rev-parse --abbrev-ref HEAD)}"
STEPS="${STEPS:-install demo test}"
IMAGE="${IMAGE:-envfactory/fresh-debian:12}"
LABEL="envfactory.fresh-check=1"
FRESH_PACKAGES="git,make,python3,python3-venv,ca-certificates,sudo,procps,docker.io"

mirror() {
  local m
  m="$(grep -rhE '^(URIs:|deb) ' /etc/apt/sources.list /etc/apt/sources.list.d/ 2>/dev/null |
    grep -oE 'https?://[^ ]*/debian/?( |$)' | head -1 | tr -d ' ' || true)"
  echo "${m:-http://deb.debian.org/debian}"
}

# apt sources as on the host (deb822 debian.sources on Debian 12), else the mirror's suites.
apt_sources() {
  local root="$1" mirror_url="$2"
  if [ -f /etc/apt/sources.list.d/debian.sources ]; then
    cp /etc/apt/sources.list.d/debian.sources "$root/etc/apt/sources.list.d/"
    rm -f "$root/etc/apt/sources.list"
  else
    printf 'deb %s bookworm main\ndeb %s bookworm-updates main\n' "$mirror_url" "$mirror_url" \
      >"$root/etc/apt/sources.list"
  fi
}

build_image() {
  local root mirror_url
  root="$(mktemp -d /tmp/fresh-rootfs-XXXX)"
  mirror_url="$(mirror)"
  echo "image: debootstrap bookworm from $mirror_url with $FRESH_PACKAGES"
  debootstrap --variant=minbase --include="$FRESH_PACKAGES" bookworm "$root" "$mirror_url" ||
    return 1
  apt_sources "$root" "$mirror_url"
  if compgen -G "/usr/local/share/ca-certificates/*.crt" >/dev/null; then
    cp /usr/local/share/ca-certificates/*.crt "$root/usr/local/share/ca-certificates/"
    chroot "$root" update-ca-certificates >/dev/null || return 1
  fi
  rm -rf "$root"/var/cache/apt/archives/*.deb "$root"/var/lib/apt/lists/*
  tar --numeric-owner -C "$root" -c . | docker import \
    -c 'ENV LANG=C.UTF-8 PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    -c 'CMD ["/bin/bash"]' - "$IMAGE" || return 1
  rm -rf "$root"
}

# The engine's storage, read-only at its own path: on a real machine envfactory reads
# containers' upper directories there (disk watchdog, overlay diffs, layer snapshots);
# without it, it falls back to the daemon's API, whose disk measurements come too late
# to name the quota to the writer that crossed it.
DOCKER_ROOT="$(docker info -f '{{.DockerRootDir}}' 2>/dev/null || echo /var/lib/docker)"

# One command inside the fresh container, as root, with a clean environment.
in_fresh() {
  docker run --rm --label "$LABEL" --network host --pid host -e "PG_TEST_PORT=$PG_PORT" \
    -e "PYTEST_ARGS=${PYTEST_ARGS:-}" \
    --cap-add SYS_ADMIN --device-cgroup-rule 'a *:* rwm' -v "$WORK/tmp:/tmp" -v "$WORK/vartmp:/var/tmp" \
    -v /var/run/docker.sock:/var/run/docker.sock -v "$DOCKER_ROOT:$DOCKER_ROOT:ro" \
    -v "$WORK:$WORK" -v "$GIT_DIR:$GIT_DIR:ro" \
    -w "$WORK/envfactory" "$IMAGE" bash -lc "$1"
}

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

timed() {
  local name="$1" cmd="$2" start rc=0
  start=$(date +%s)
  in_fresh "$cmd" >"$WORK/$name.log" 2>&1 || rc=$?
  echo "$name: exit $rc in $(($(date +%s) - start)) s (log $WORK/$name.log)" | tee -a "$WORK/summary.txt"
  return 0
}

summary() {
  echo "---- summary ($WORK)"
  cat "$WORK/summary.txt"
  if [ -f "$WORK/demo.log" ]; then
    echo "demo: $(grep -cE '^seed [^ ]+ ' "$WORK/demo.log" || true) seed(s) submitted;" \
      "$(grep -cE ': outcome: published' "$WORK/demo.log" || true) published;" \
      "pack: $(grep -oE '^pack: .*\([0-9]+ environment' "$WORK/demo.log" | grep -oE '[0-9]+ environment' ||
        echo none)"
    grep -E 'not published|did not end published|^trainer: |error:|^make: \*\*\*|Error: ' "$WORK/demo.log" | cut -c1-200 | sed 's/^/  /' || true
  fi
  if [ -f "$WORK/test.log" ]; then
    echo "test: $(grep -E '^=+ .*(passed|failed|error).* in ' "$WORK/test.log" | tail -1)"
    echo "skips (count, reason):"
    grep -E '^SKIPPED' "$WORK/test.log" | sed -E 's/^SKIPPED \[([0-9]+)\] [^:]+:[0-9]+: /\1 /' |
      awk '{n=$1; $1=""; c[$0]+=n} END {for (r in c) print "  " c[r] r}' || true
    grep -E '^(FAILED|ERROR) ' "$WORK/test.log" | sed 's/^/  /' || true
  fi
}

main() {
  if [ "${1:-}" = --summary ]; then
    WORK="$2"
    summary
    return
  fi
  [ "$(id -u)" = 0 ] || { echo "run as root (debootstrap, docker)" >&2; exit 1; }
  WORK="$(mktemp -d /tmp/fresh-XXXX)"
  : >"$WORK/summary.txt"
  if [ -z "$(docker images -q "$IMAGE")" ] || [ -n "${REBUILD:-}" ]; then
    build_image >"$WORK/image.log" 2>&1 || { cat "$WORK/image.log"; exit 1; }
  fi
  echo "image $IMAGE: $(docker image inspect -f '{{.Size}}' "$IMAGE") bytes" | tee -a "$WORK/summary.txt"
  GIT_DIR="$(cd "$SOURCE" && cd "$(git rev-parse --git-common-dir)" && pwd)"
  PG_PORT="$(free_port)"
  mkdir -p "$WORK/envfactory" "$WORK/tmp" "$WORK/vartmp"
  chmod 1777 "$WORK/tmp" "$WORK/vartmp"
  in_fresh "git clone -q --branch $BRANCH $GIT_DIR $WORK/envfactory"
  echo "clone: $BRANCH at $(git -C "$WORK/envfactory" rev-parse --short HEAD)" | tee -a "$WORK/summary.txt"
  for step in $STEPS; do
    if [ -n "${PARALLEL:-}" ] && [ "$step" != install ]; then
      timed "$step" "make $step" &
    else
      timed "$step" "make $step"
    fi
  done
  wait
  summary | tee "$WORK/summary.log"
  if [ -z "${KEEP:-}" ]; then
    in_fresh "rm -rf $WORK/envfactory" >/dev/null 2>&1 || true
    rm -rf "$WORK/tmp" "$WORK/vartmp"
  fi
}

main "$@"
