"""Probes that change a result through the channel it was produced by: a repository's
history.

A probe derived from the oracle's outputs (truncated, numbers changed, fields dropped,
padded) must leave a state a solver could really leave. Where the reference *committed*
its result, the result is the commit, not the working tree: a probe that edits only
working-tree files leaves a state no solver leaves (the commit right, the tree wrong),
and a sound verifier that reads the commit rightly still gives 1 — which a gate would
call a shortcut. So `OracleEdit.script` runs the probe's edits and then, in every git
repository under the workspace whose tracked files were clean before the edits (the
reference's result was committed, or the repository was left alone) and are changed
after them, amends HEAD with the change: same author, committer and dates, same message,
every branch and tag that pointed at the old HEAD moved to the new one (an annotated tag
re-made with its message). The working tree and the history then agree, as they would
for a solver who committed the wrong result.

A repository with uncommitted changes before the edits is left as the edits leave it:
the reference's result there is the working tree. Hooks never run (`core.hooksPath` off),
and a state without git, or with no repository, runs the edits alone.
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Sequence

from envfactory.core.models import EnvironmentSpec

from .base import Probe, qs

#: how deep under a workspace path a repository is looked for
MAX_DEPTH = 4

GIT = 'git -c safe.directory="*" -c core.hooksPath=/dev/null -C "$d"'


def moved_refs(old: str, new: str) -> str:
    """Shell moving every branch and tag that points at commit `$old` (a shell variable's
    name) to `$new`; an annotated tag is made again with its message, tagger and date."""
    return f"""
{GIT} for-each-ref --points-at "${old}" --format='%(refname) %(objecttype)' \\
  refs/heads refs/tags | while read -r ref type; do
  if [ "$type" = tag ]; then
    name=${{ref#refs/tags/}}
    GIT_COMMITTER_NAME="$({GIT} tag -l --format='%(taggername)' "$name")" \\
    GIT_COMMITTER_EMAIL="$({GIT} tag -l --format='%(taggeremail)' "$name" | tr -d '<>')" \\
    GIT_COMMITTER_DATE="$({GIT} tag -l --format='%(taggerdate:rfc)' "$name")" \\
      {GIT} tag -f -a -m "$({GIT} tag -l --format='%(contents)' "$name")" \\
      "$name" "${new}" >/dev/null
  else
    {GIT} update-ref "$ref" "${new}"
  fi
done"""


def through_history(edits: str, roots: Sequence[str]) -> str:
    """`edits` (a shell script), with their changes to committed files amended into HEAD
    of each repository under `roots` (module docstring)."""
    return f"""
__ef_clean=""
if command -v git >/dev/null 2>&1; then
  for __ef_root in {qs(roots)}; do
    [ -d "$__ef_root" ] || continue
    for __ef_git in $(find "$__ef_root" -maxdepth {MAX_DEPTH} -name .git 2>/dev/null); do
      d=$(dirname "$__ef_git")
      {GIT} rev-parse -q --verify HEAD >/dev/null 2>&1 || continue
      [ -z "$({GIT} status --porcelain --untracked-files=no 2>/dev/null)" ] || continue
      __ef_clean="$__ef_clean $d"
    done
  done
fi
(
{edits}
)
__ef_rc=$?
for d in $__ef_clean; do
  [ -n "$({GIT} status --porcelain --untracked-files=no 2>/dev/null)" ] || continue
  __ef_old=$({GIT} rev-parse HEAD)
  {GIT} add -u
  GIT_COMMITTER_NAME="$({GIT} log -1 --format=%cn)" \\
  GIT_COMMITTER_EMAIL="$({GIT} log -1 --format=%ce)" \\
  GIT_COMMITTER_DATE="$({GIT} log -1 --format=%cD)" \\
    {GIT} commit -q --amend --no-edit --no-verify --allow-empty || continue
  __ef_new=$({GIT} rev-parse HEAD)
{moved_refs("__ef_old", "__ef_new")}
done
exit $__ef_rc
"""


class OracleEdit(Probe):
    """A probe that edits the oracle's results; its edits reach the history where the
    reference committed them (`through_history`). Subclasses write `edits`."""

    @abstractmethod
    def edits(self, spec: EnvironmentSpec) -> str:
        """The shell script that changes the oracle's result files."""

    def script(self, spec: EnvironmentSpec) -> str:
        return through_history(self.edits(spec), spec.workspace_paths)
