"""Input tampering: rewrite the task's *inputs* so that a degenerate answer is right for them.

A verifier that recomputes its expectation from files the solver can write (the input
CSV inside the workspace, the database the task ships) checks the solver's answer against
the solver's own inputs. These probes change every input the same way, then write the
answer that is correct for the changed inputs at every output path.

Inputs and outputs come from the instruction (`workspace.mentioned_paths`): a mentioned
path that exists when the probe runs is an input, one that does not is an output. When
the instruction names no existing file, every regular file of the workspace (``.git``
and test files aside, at most `_MAX_FILES`) is taken for an input. An input inside a git
repository is folded into its last commit (amended), so a verifier that guards its
inputs with `git diff HEAD` / `git status` is probed too. Cost: two probe states
(emptied, minimal), each doing every file at once.

Invariants: only workspace files and mentioned paths are touched; a file's replacement is
of the same type as the original (by extension: CSV keeps its header, JSON keeps its
outer type, SQLite becomes an empty database), so a verifier that parses inputs before
computing still parses them.
"""

from __future__ import annotations

from collections.abc import Sequence

from envfactory.core.models import EnvironmentSpec, Step
from envfactory.core.models.rows import RowId

from .base import Probe, qs
from .workspace import Workspace, file_hashes, is_output, mentioned_paths

_MAX_FILES = 200

#: Shell: the inputs ($inputs) and outputs ($outputs), one path a line.
_SELECT = """
inputs=; outputs=
for p in {mentioned}; do
  if [ -f "$p" ]; then inputs="$inputs
$p"; elif [ ! -e "$p" ]; then outputs="$outputs
$p"; fi
done
if [ -z "$inputs" ]; then
  for ws in {workspaces}; do
    [ -d "$ws" ] || continue
    inputs="$inputs
$(find "$ws" -xdev -type f ! -path '*/.git/*' ! -name 'test_*' ! -name '*_test.*' ! -name 'conftest.py' 2>/dev/null | head -n {max})"
  done
fi
first_header=
"""

#: Shell: write degenerate outputs; $1 is the value for plain-text outputs.
_OUTPUTS = """
echo "$outputs" | while read -r p; do
  [ -n "$p" ] || continue
  case "$p" in */) mkdir -p "$p"; continue;; esac
  mkdir -p "$(dirname "$p")" 2>/dev/null
  case "$p" in
    *.json) printf '%s\\n' "$json_out" > "$p" ;;
    *.jsonl|*.ndjson|*.log) : > "$p" ;;
    *.csv|*.tsv) if [ -n "$csv_out" ]; then printf '%s\\n' "$csv_out" > "$p"; else : > "$p"; fi ;;
    *.db|*.sqlite|*.sqlite3) : > "$p" ;;
    *) printf '%s\\n' "$text_out" > "$p" ;;
  esac
done
true
"""


#: Shell: fold the rewritten inputs into the last commit of the git repository holding
#: them, and move every branch and tag that pointed at that commit to the new one (`git
#: diff HEAD`, `git diff <tag>` and `git status` then see nothing; the commit count is
#: unchanged).
_AMEND = """
command -v git >/dev/null 2>&1 && echo "$inputs" | while read -r p; do
  [ -f "$p" ] || continue
  top=$(git -c safe.directory='*' -C "$(dirname "$p")" rev-parse --show-toplevel 2>/dev/null) || continue
  git -c safe.directory='*' -C "$top" add -A -- "$p" 2>/dev/null && echo "$top"
done | sort -u | while read -r top; do
  g="git -c safe.directory=* -C $top"
  old=$($g rev-parse -q --verify HEAD 2>/dev/null) || continue
  $g -c user.name=probe -c user.email=probe@localhost commit -q --amend --no-edit --allow-empty 2>/dev/null || continue
  new=$($g rev-parse HEAD)
  $g for-each-ref --points-at "$old" --format='%(refname)' | while read -r ref; do
    $g update-ref "$ref" "$new"
  done
done
"""


def _script(spec: EnvironmentSpec, rewrite: str, outputs: str) -> str:
    select = _SELECT.format(
        mentioned=qs(mentioned_paths(spec.instruction, spec.workdir)) or "''",
        workspaces=qs(spec.workspace_paths),
        max=_MAX_FILES,
    )
    return select + rewrite + _AMEND + outputs + _OUTPUTS


class EmptiedInputs(Probe):
    """Truncates every input file to zero bytes, then writes the answer that is right for
    no data at every output path: ``0`` (text), ``[]`` (JSON), an empty CSV / JSON-lines
    file. Fools a verifier whose expected answer is computed from input files the solver
    can write ("sum of input.csv" over an empty file is 0)."""

    name = "inputs-emptied"

    def script(self, spec: EnvironmentSpec) -> str:
        rewrite = """
echo "$inputs" | while read -r p; do [ -f "$p" ] && : > "$p"; done
"""
        return _script(spec, rewrite, "json_out='[]'; csv_out=; text_out=0\n")


class MinimalInputs(Probe):
    """Replaces every input file with the smallest valid file of its type — a CSV keeps
    only its header row, JSON becomes ``{}`` or ``[]`` (its outer type kept), JSON lines,
    text and logs become empty, a SQLite database an empty one — then writes the matching
    degenerate answer at every output path (``0``, ``{}``/``[]``, the header-only CSV). Fools
    a verifier that parses its inputs before deriving its expectation from them."""

    name = "inputs-minimal"

    def script(self, spec: EnvironmentSpec) -> str:
        rewrite = """
json_out='{}'
while read -r p; do
  [ -f "$p" ] || continue
  case "$p" in
    *.csv|*.tsv) h=$(head -n 1 "$p"); printf '%s\\n' "$h" > "$p"; [ -n "$first_header" ] || first_header=$h ;;
    *.json) if head -c 64 "$p" | grep -q '^[[:space:]]*\\['; then echo '[]' > "$p"; json_out='[]'; else echo '{}' > "$p"; fi ;;
    *) : > "$p" ;;
  esac
done <<EOI
$inputs
EOI
"""
        outputs = "csv_out=$first_header; text_out=0\n"
        return _script(spec, rewrite, outputs)


#: The row of the reference solution run on minimal inputs (see `recomputed_steps`).
RECOMPUTED = RowId.probe_on("inputs-minimal+reference", RowId.noop())


def recomputed_steps(spec: EnvironmentSpec) -> tuple[Step, ...]:
    """The strongest input attack: make the inputs minimal, then do the task right *for
    them* (the reference solution's own steps), as a solver that writes a correct program
    and feeds it data of its own would. Its outputs are right for the altered inputs and
    wrong for the task's, so only a verifier that takes its truth from the workspace
    accepts them."""
    tamper = Step(title="inputs made minimal", script=MinimalInputs().script(spec))
    return (tamper, *spec.reference_solution)


def changed_outputs(state: Workspace, oracle: Workspace, pristine: Workspace) -> list[str]:
    """The files the oracle wrote that hold other bytes in `state`: when the reference
    solution, run on altered inputs, still writes the oracle's bytes, those inputs do not
    feed the answer and the state is no attack (its row is skipped, not failed). By-products
    (bytecode, caches: `is_output`) do not count: their bytes change with the clock."""
    before, want, got = file_hashes(pristine), file_hashes(oracle), file_hashes(state)
    return sorted(
        p for p, h in want.items() if before.get(p) != h and is_output(p) and got.get(p) != h
    )


def recomputed_note(changed: Sequence[str]) -> str:
    """What the report says of the reference run on minimal inputs (`changed`: the
    outputs it wrote other bytes to; none: the row is not checked)."""
    if not changed:
        return (
            f"{RECOMPUTED} not checked: the reference solution wrote the oracle's "
            "outputs from minimal inputs (the inputs do not feed the answer)"
        )
    more = " …" if len(changed) > 5 else ""
    return (
        f"{RECOMPUTED} checked: from minimal inputs the reference solution wrote "
        f"other bytes to {', '.join(changed[:5])}{more}"
    )
