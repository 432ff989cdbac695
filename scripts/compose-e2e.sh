#!/usr/bin/env bash
# End to end through the compose stack: build the images (locally, no registry), bring the
# stack up with the model variables pointed at a chat-completions server replaying one
# example seed's scripts (docker/compose.e2e.yml), upload that seed through the API, wait
# until its environment is published, then `down -v` and check nothing is left behind.
#
# Usage:  scripts/compose-e2e.sh [SEED]     (an example seed; default: sqlite-wal-crash-recovery)
#         scripts/compose-e2e.sh SEED_DIR SCRIPTS_DIR
#                 a seed of yours (SEED_DIR/seed.yaml and its files) and the role scripts
#                 written for it (SCRIPTS_DIR/<role>.yaml), served to the stack's model
# Env:    E2E_TIMEOUT_S (from the upload to published; default 1500), PYTHON (for the base image build; default
#         .venv/bin/python). The API and Temporal UI go to free ports on 127.0.0.1.
# Exit 0 only when the seed ended published and the teardown left no container, volume
# or network of the project (sandboxes the worker made included).
set -euo pipefail
cd "$(dirname "$0")/.."
SEED=${1:-sqlite-wal-crash-recovery}
if [ $# -ge 2 ]; then  # a seed of yours: the model serves its scripts from a mounted directory
  DIR=$1
  [ -f "$2/research.yaml" ] || { echo "compose-e2e: no research.yaml in $2" >&2; exit 2; }
  export E2E_SCRIPTS_DIR=$(cd "$2" && pwd) E2E_SEED=/scripts
else
  DIR=examples/seeds/$SEED
  export E2E_SEED=$SEED
fi
[ -f "$DIR/seed.yaml" ] || { echo "compose-e2e: no seed at $DIR/seed.yaml" >&2; exit 2; }
PROJECT=envfactory-e2e-$$
TIMEOUT=${E2E_TIMEOUT_S:-1500}
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
export ENVFACTORY_API_PORT=$(free_port) ENVFACTORY_TEMPORAL_UI_PORT=$(free_port)
API=http://127.0.0.1:$ENVFACTORY_API_PORT/api
export POSTGRES_PASSWORD=e2e-$$
export ENVFACTORY_AGENTS_BACKEND=openai ENVFACTORY_AGENTS_BASE_URL=http://model:8000/v1
export ENVFACTORY_AGENTS_MODEL=research ENVFACTORY_AGENTS_RESEARCH_MODEL=research
export ENVFACTORY_AGENTS_JUDGE_MODEL=judge ENVFACTORY_AGENTS_VERIFIER_MODEL=verifier
export ENVFACTORY_AGENTS_RED_TEAM_MODEL=red_team OPENAI_API_KEY=unused
# the served scripts have no analyst: it stays scripted (reads seeds it has a script for)
export ENVFACTORY_AGENTS_SHORTCUT_ANALYST_BACKEND=scripted
compose() { docker compose -p "$PROJECT" -f docker-compose.yml -f docker/compose.e2e.yml "$@"; }
t0=$(date +%s)
say() { echo "compose-e2e [$(($(date +%s) - t0))s] $*" >&2; }

# ids of the containers / images / networks whose envfactory owner is a process of the
# worker container
mine() {
  local labels=.Config.Labels all=-a
  [ "$1" = network ] && labels=.Labels all=
  docker "$1" ls $all -q --no-trunc --filter label=envfactory.owner=envfactory \
    | { xargs -r docker "$1" inspect -f "{{index $labels \"envfactory.owner_proc\"}} {{.Id}}" \
        2>/dev/null || true; } \
    | awk -v h="$worker_host:" 'index($1, h) == 1 {print $2}'
}

teardown() {
  rc=$?
  set +e  # clean up as much as possible whatever fails (other processes share the engine)
  if [ $rc -ne 0 ]; then compose logs --no-color --tail 80 worker api model >&2 || true; fi
  say "tearing down"
  compose down -v --remove-orphans --timeout 20 >/dev/null 2>&1 || true
  left=$(docker ps -aq --filter "label=com.docker.compose.project=$PROJECT")
  left+=$(docker volume ls -q --filter "label=com.docker.compose.project=$PROJECT")
  left+=$(docker network ls -q --filter "label=com.docker.compose.project=$PROJECT")
  if [ -n "${worker_host:-}" ]; then
    # what the worker made on the host engine carries its hostname in the owner label:
    # sandboxes must already be gone; its images (environments, states) are removed here
    left+=$(mine container)$(mine network)
    mine image | xargs -r docker rmi -f >/dev/null 2>&1 || true
    left+=$(mine image)
  fi
  if [ -n "$left" ]; then say "LEFT BEHIND: $left"; rc=1; fi
  say "done, exit $rc (wall $(($(date +%s) - t0)) s)"
  exit $rc
}
trap teardown EXIT

say "building images"
PYTHON=${PYTHON:-.venv/bin/python} bash docker/build-images.sh >/dev/null
say "starting the stack (project $PROJECT)"
compose up -d --wait
worker_host=$(docker inspect -f '{{.Config.Hostname}}' "$(compose ps -q worker)")
TOKEN=$(compose exec -T api envfactory reviewer add e2e 2>/dev/null | tail -1)
[ -n "$TOKEN" ] || { say "no reviewer token from the api container"; exit 1; }

say "uploading $SEED"
files=()
while IFS= read -r rel; do  # every file under the seed's directory, by its relative path
  [ "$rel" = seed.yaml ] || files+=(-F "files=@$DIR/$rel;filename=$rel")
done < <(cd "$DIR" && find . -type f | sed 's|^\./||' | sort)
seed_id=$(curl -sS --fail-with-body -H "Authorization: Bearer $TOKEN" -F "seed=@$DIR/seed.yaml" "${files[@]}" \
  "$API/seeds/upload" | python3 -c 'import json,sys; b=json.load(sys.stdin); assert b["pipeline_started"], b; print(b["seed"]["id"])')
say "seed $seed_id accepted, pipeline started"

status=""
deadline=$(($(date +%s) + TIMEOUT))
while [ "$(date +%s)" -lt "$deadline" ]; do
  status=$(curl -sf -H "Authorization: Bearer $TOKEN" "$API/environments?seed_id=$seed_id" \
    | python3 -c "import json,sys; print(' '.join(e['status'] for e in json.load(sys.stdin)['items']))")
  case " $status " in
    *" published "*) say "published"; exit 0 ;;
    *" rejected "*|*" unproven "*) say "environment ended $status"; exit 1 ;;
  esac
  sleep 5
done
say "timed out after ${TIMEOUT}s (environment status: ${status:-none yet})"
exit 1
