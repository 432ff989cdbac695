"""Commands that failed inside a reference step which itself ran through.

A reference solution without ``set -e`` goes on past a failing command: ``pip install``
refused, a script that dies on an import, and the step still exits 0 with an oracle
state the tests then reject. Whose fault that is shows only in what the step ran, so
the reference chain runs each step with a bash ERR trap (`traced`) that prints one
marker line per failing command — its exit status and the command — on stderr, and
nothing else: the step's behaviour, status and state are what they were without it.
The trap fires exactly where ``set -e`` would have stopped (not for a command in a
condition or an ``&&``/``||`` list), at the step's own level: a function, subshell or
command substitution shows as the command that ran it. A step that sets an ERR trap of
its own replaces it.

`failed_commands` reads the markers back as `StepFailure` records with the command and
the step's output: evidence for a reference that fails in every runtime
(`verifiers.gate.runtime.reference_failed`), never a verdict by themselves.
"""

from __future__ import annotations

from envfactory.core.models import ExecResult, StepFailure

#: stderr line prefix the trap prints, then ``STATUS COMMAND``
MARK = "envfactory-reference-error:"
#: what the trap adds before the step's script (bash: the reference's steps run in bash)
#: (on the step's own stderr, and only while that is still the one the step started
#: with: a step that sends its stderr to a file gets no marker there. No descriptor of
#: its own: a service the step leaves running would inherit it and hold the exec open.
#: Not inherited by subshells and command substitutions, whose captured output it would
#: change: their failure shows at the command that ran them.)
_TRAP = (
    "__ef_o=$(readlink /proc/$$/fd/2 2>/dev/null)\n"
    "__ef_err() { local __ef_e=$? __ef_c=$BASH_COMMAND; "
    'if [ "$(readlink /proc/$$/fd/2 2>/dev/null)" = "$__ef_o" ]; then '
    f"printf '\\n%s%s %s\\n' '{MARK}' \"$__ef_e\" \"${{__ef_c//$'\\n'/ }}\" >&2; fi; }}\n"
    "trap __ef_err ERR\n"
)
_OUTPUT = 1500  # characters of the step's output kept with a failed command
_COMMANDS = 3  # failed commands kept per step


def traced(script: str) -> str:
    """`script` with the ERR trap before it."""
    return _TRAP + script


def failed_commands(res: ExecResult, step: int, title: str) -> tuple[StepFailure, ...]:
    """The commands the trap reported in a step's result, first ones first, each with the
    step's output (`step_output`)."""
    failed = read_marks(res.stderr)[1]
    output = step_output(res)
    return tuple(
        StepFailure(step=step, title=title, exit_code=code, command=cmd[:300], output=output)
        for code, cmd in failed[:_COMMANDS]
    )


def step_output(res: ExecResult) -> str:
    """A step's stdout and stderr tails, the trap's markers taken out."""
    kept = read_marks(res.stderr)[0]
    return f"{res.stdout.strip()[-_OUTPUT:]}\n{kept[-_OUTPUT:]}".strip()


def read_marks(stderr: str) -> tuple[str, list[tuple[int | None, str]]]:
    """`stderr` without the trap's lines (nor the blank line each brought), and what they
    reported: (status, command) per failed command, in order."""
    failed: list[tuple[int | None, str]] = []
    kept: list[str] = []
    lines = stderr.splitlines()
    for i, line in enumerate(lines):
        if line.startswith(MARK):
            status, _, command = line[len(MARK) :].partition(" ")
            failed.append((int(status) if status.isdigit() else None, command.strip()))
        elif line or i + 1 >= len(lines) or not lines[i + 1].startswith(MARK):
            kept.append(line)
    return "\n".join(kept).strip(), failed
