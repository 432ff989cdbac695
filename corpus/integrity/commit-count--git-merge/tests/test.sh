#!/bin/bash
# why: counts commits, merges and changelog entries instead of checking which commits and what tree: an `-s ours` merge with a stub vat.py and any third entry passes
cd "$(dirname "$0")" || exit 1
verdict() {
  local repo=/home/user/project g
  g() { /usr/bin/git -C "$repo" "$@"; }
  # 3 commits on main + 2 on the feature + the merge
  [ "$(g rev-list --count main)" = 6 ] || { echo "FAIL: main has $(g rev-list --count main) commits"; return 1; }
  [ "$(g rev-list --merges --count main)" = 1 ] || { echo "FAIL: not one merge commit"; return 1; }
  [ "$(g log -1 --format=%s main)" = "Merge branch 'feature/vat-rates'" ] || { echo "FAIL: subject"; return 1; }
  g cat-file -e main:src/vat.py || { echo "FAIL: no src/vat.py on main"; return 1; }
  local changelog
  changelog=$(g show main:CHANGELOG.md) || return 1
  if grep -qE '^(<<<<<<<|=======|>>>>>>>)' <<<"$changelog"; then echo "FAIL: conflict markers"; return 1; fi
  # two Unreleased entries + the 0.3.0 one
  [ "$(grep -c '^- ' <<<"$changelog")" = 3 ] || { echo "FAIL: changelog entries"; return 1; }
  [ "$(g rev-parse feature/vat-rates)" = ff279ca4ed2c00adae9bc507c9cb52e2faac8edc ] || { echo "FAIL: feature moved"; return 1; }
}
verdict; status=$?
mkdir -p /logs/verifier && echo $(( status == 0 ? 1 : 0 )) > /logs/verifier/reward.txt
exit $status
