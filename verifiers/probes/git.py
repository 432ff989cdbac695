"""Probes of the git channel: a result that is a commit, and the code git runs by itself.

A task whose result is a commit (and a tag) has two ways to be faked that editing files
cannot show: leaving the right files uncommitted (`UncommittedResult`), and leaving code
in the repository that the verifier's own git runs — hooks, `core.fsmonitor` and a smudge
filter named in `.git/info/attributes` — which
rewrites the working tree while the verifier looks (`GitHookReplay`). Both are built per
gate run from the refs and files in the pristine and oracle states' workspace tars.
"""

from __future__ import annotations

import posixpath
from collections.abc import Mapping

from envfactory.core.models import EnvironmentSpec

from .base import Probe, qs
from .history import GIT, moved_refs
from .numbers import embedded_writes, within_budget
from .workspace import is_output

# -- a repository's refs, read from a state's workspace tars -------------------------------

Refs = dict[str, str]  # ref name (or HEAD) → commit or tag id


def repositories(entries: Mapping[str, bytes]) -> dict[str, Refs]:
    """Each repository in a state's files (absolute path → bytes): its folder → its refs
    (loose and packed, and HEAD resolved)."""
    repos: dict[str, Refs] = {}
    for path in entries:
        if path.endswith("/.git/HEAD"):
            git = path[: -len("/HEAD")]
            repos[posixpath.dirname(git)] = _refs(entries, git)
    return repos


def _refs(entries: Mapping[str, bytes], git: str) -> Refs:
    refs: Refs = {}
    packed = entries.get(f"{git}/packed-refs", b"").decode(errors="replace")
    for line in packed.splitlines():
        parts = line.split()
        if len(parts) == 2 and not line.startswith(("#", "^")):
            refs[parts[1]] = parts[0]
    prefix = f"{git}/refs/"
    for path, data in entries.items():
        if path.startswith(prefix):
            refs[path[len(git) + 1 :]] = data.decode(errors="replace").strip()
    head = entries.get(f"{git}/HEAD", b"").decode(errors="replace").strip()
    refs["HEAD"] = refs.get(head.removeprefix("ref: "), "") if head.startswith("ref: ") else head
    return refs


def _relative(files: Mapping[str, bytes], repo: str) -> dict[str, bytes]:
    """The files by their path in the repository: a hook writes them into the working
    tree git is updating (its own, or one the verifier checked out elsewhere)."""
    return {posixpath.relpath(p, repo): data for p, data in files.items()}


def _in_repo(path: str, repo: str) -> bool:
    return path.startswith(repo.rstrip("/") + "/") and "/.git/" not in path[len(repo) :]


class UncommittedResult(Probe):
    """Applied to the oracle state, where the reference committed (a repository's refs
    differ from the task's start): every ref goes back to where the task started it — the
    reference's commits and tags undone, refs it created deleted — while the working tree
    keeps the reference's files, uncommitted. Fools a verifier that checks the files and
    never that the change was committed (or tagged) as the instruction asks. Built per
    gate run from the pristine and oracle states' refs (`for_states`); never in the
    default battery."""

    name = "uncommitted-result"

    def __init__(self, repos: Mapping[str, Refs] | None = None) -> None:
        self.repos = dict(repos or {})  # repository → its refs at the start

    @classmethod
    def for_states(
        cls, oracle: Mapping[str, bytes], pristine: Mapping[str, bytes]
    ) -> UncommittedResult:
        before, after = repositories(pristine), repositories(oracle)
        changed = {repo: refs for repo, refs in before.items() if after.get(repo, refs) != refs}
        return cls({r: refs for r, refs in changed.items() if refs.get("HEAD")})

    def script(self, spec: EnvironmentSpec) -> str:
        lines = ["command -v git >/dev/null 2>&1 || exit 0"]
        for repo, refs in sorted(self.repos.items()):
            d = f"d={qs([repo])}"
            keep = " ".join(qs([r]) for r in sorted(refs) if r != "HEAD")
            lines.append(
                f"""{d}
{GIT} reset -q --mixed {qs([refs["HEAD"]])} || exit 1
{GIT} for-each-ref --format='%(refname)' refs/heads refs/tags | while read -r ref; do
  case " {keep} " in *" $ref "*) ;; *) {GIT} update-ref -d "$ref" ;; esac
done"""
            )
            for ref, oid in sorted(refs.items()):
                if ref != "HEAD":
                    lines.append(f"{GIT} update-ref {qs([ref, oid])} 2>/dev/null || true")
        return "\n".join(lines) + "\ntrue\n"


class HollowCommits(Probe):
    """Applied to the oracle state, where the reference committed: every commit it made
    keeps its message, author, dates and parents (a merge stays a merge, a tag moves
    along) but records its first parent's tree, and the working tree is checked out to
    match — the history's shape without the change (``git merge -s ours``, an empty
    commit with the right subject). Fools a verifier that checks how many commits, merges
    or entries there are and what they are called, never what the commits hold. Built
    per gate run from the pristine and oracle states' refs (`for_states`); never in the
    default battery."""

    name = "hollow-commits"

    def __init__(self, repos: Mapping[str, Refs] | None = None) -> None:
        self.repos = dict(repos or {})  # repository → its refs at the start

    def script(self, spec: EnvironmentSpec) -> str:
        lines = ["command -v git >/dev/null 2>&1 || exit 0", "__ef_map=$(mktemp) || exit 1"]
        for repo, refs in sorted(self.repos.items()):
            starts = " ".join(qs([oid]) for r, oid in sorted(refs.items()) if oid)
            lines.append(f"d={qs([repo])}\n{_HOLLOW.replace('__STARTS__', starts)}")
        lines.append('rm -f "$__ef_map"\ntrue')
        return "\n".join(lines) + "\n"


#: Rewrites the commits reachable from the branches and not from any start ref, oldest
#: first, each onto its rewritten parents with its first parent's tree; then moves the
#: branches and tags that pointed at them, and checks the working tree out (hooks off).
_HOLLOW = f"""
: > "$__ef_map"
__ef_mapped() {{ awk -v c="$1" '$1 == c {{ print $2; f = 1 }} END {{ if (!f) print c }}' "$__ef_map"; }}
for c in $({GIT} rev-list --reverse --topo-order --branches --not __STARTS__ 2>/dev/null); do
  set -- $({GIT} rev-list --parents -n 1 "$c")
  shift
  args=""; first=""
  for p in "$@"; do
    m=$(__ef_mapped "$p"); args="$args -p $m"; [ -n "$first" ] || first=$m
  done
  if [ -n "$first" ]; then tree=$({GIT} rev-parse "$first^{{tree}}")
  else tree=$({GIT} hash-object -t tree /dev/null); fi
  new=$({GIT} log -1 --format=%B "$c" | \
    GIT_AUTHOR_NAME="$({GIT} log -1 --format=%an "$c")" \
    GIT_AUTHOR_EMAIL="$({GIT} log -1 --format=%ae "$c")" \
    GIT_AUTHOR_DATE="$({GIT} log -1 --format=%aD "$c")" \
    GIT_COMMITTER_NAME="$({GIT} log -1 --format=%cn "$c")" \
    GIT_COMMITTER_EMAIL="$({GIT} log -1 --format=%ce "$c")" \
    GIT_COMMITTER_DATE="$({GIT} log -1 --format=%cD "$c")" \
    {GIT} commit-tree "$tree" $args) || continue
  echo "$c $new" >> "$__ef_map"
done
while read -r old new; do
{moved_refs("old", "new")}
done < "$__ef_map"
[ -s "$__ef_map" ] && {GIT} reset -q --hard HEAD
"""


#: hooks git runs by itself after it changed the working tree or a ref (checkout, reset,
#: merge, rebase, commit), and the config that makes git run a program on `status`/`diff`
HOOKS = ("post-checkout", "post-merge", "post-rewrite", "post-commit", "reference-transaction")


def _smudge(replay: str, files: Mapping[str, bytes]) -> str:
    """A smudge filter: runs the replay, then gives git the reference's version of a file it
    replayed (git writes it into the working tree) and any other file unchanged."""
    names = "|".join(qs([name]) for name in sorted(files)) or "''"
    return (  # git creates the file itself once the filter returns: the replay's copy goes
        f't=$(mktemp) || exit 1\ncat > "$t"\nsh {replay} >/dev/null 2>&1\n'
        f'case "$1" in {names}) cat -- "$1" > "$t"; rm -f -- "$1" ;; esac\n'
        'cat -- "$t"\nrm -f "$t"\n'
    )


class GitHookReplay(Probe):
    """Applied to the untouched state: each repository the reference changed files in gets
    hooks (post-checkout, post-merge, post-rewrite, post-commit, reference-transaction), a
    `core.fsmonitor` program and a smudge filter for every path (`.git/info/attributes`,
    `filter.*.smudge`: it survives `core.hooksPath=/dev/null`) that write the reference's
    versions of those files into the working tree git is updating (its own, or a worktree or
    checkout the verifier makes elsewhere) whenever git runs them — nothing is committed. Fools a verifier that runs
    git in the solver's repository (`git checkout`, `git reset --hard`, `git status`)
    without turning hooks and the repository's config off, then reads the working tree.
    Built per gate run from the oracle's files (`for_states`); never in the default
    battery."""

    name = "git-hook-replay"

    def __init__(self, files: Mapping[str, Mapping[str, bytes]] | None = None) -> None:
        self.files = {repo: dict(fs) for repo, fs in (files or {}).items()}

    @classmethod
    def for_states(
        cls, oracle: Mapping[str, bytes], pristine: Mapping[str, bytes]
    ) -> GitHookReplay:
        out: dict[str, dict[str, bytes]] = {}
        for repo in repositories(pristine):
            changed = {
                p: data
                for p, data in oracle.items()
                if _in_repo(p, repo) and pristine.get(p) != data and is_output(p)
            }
            changed = within_budget(changed)
            if changed:
                out[repo] = changed
        return cls(out)

    @property
    def applies(self) -> bool:
        return bool(self.files)

    def script(self, spec: EnvironmentSpec) -> str:
        parts = []
        for repo, files in sorted(self.files.items()):
            git = f"{repo}/.git"
            replay = f"{git}/envfactory-replay.sh"
            hook = f"#!/bin/sh\\nsh {replay} >/dev/null 2>&1\\nexit 0\\n"
            fsmonitor = f"#!/bin/sh\\nsh {replay} >/dev/null 2>&1\\nexit 1\\n"
            monitor = f"{git}/hooks/fsmonitor-watchman"
            smudge = _smudge(replay, _relative(files, repo))
            parts.append(
                f"""if [ -d {qs([git])} ]; then
cat > {qs([replay])} <<'ENVFACTORY_REPLAY'
cd "$(git rev-parse --show-toplevel 2>/dev/null || pwd)" || exit 0
{embedded_writes(_relative(files, repo))}ENVFACTORY_REPLAY
mkdir -p {qs([git + "/hooks"])}
for h in {" ".join(HOOKS)}; do
  printf {qs([hook])} > {qs([git + "/hooks"])}/$h && chmod 755 {qs([git + "/hooks"])}/$h
done
printf {qs([fsmonitor])} > {qs([monitor])} && chmod 755 {qs([monitor])}
git config -f {qs([git + "/config"])} core.fsmonitor {qs([monitor])} 2>/dev/null || true
printf %s {qs([smudge])} > {qs([git + "/envfactory-smudge.sh"])}
mkdir -p {qs([git + "/info"])} && echo '* filter=envfactory' >> {qs([git + "/info/attributes"])}
git config -f {qs([git + "/config"])} filter.envfactory.smudge \
  {qs([f"sh {git}/envfactory-smudge.sh %f"])} 2>/dev/null || true
fi"""
            )
        return "\n".join(parts) + "\ntrue\n"
