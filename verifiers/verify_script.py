"""The shell a verification runs, generated here and nowhere else, and the markers it
prints that the runner parses back.

`setup_script` is run as ``/bin/sh -c SCRIPT envfactory-verify ENTRY [CHUNK...]``, as
root, from ``/``, in a fresh container (`verifiers.runner`). Step by step:

0. ``before`` (a harbor row run as one command): the recipe that re-creates the state,
   each entry in a subshell cd'd to its workdir, under ``timeout``, with the image's
   environment, no input and its output dropped (`replay_lines`). Harbor's runtime
   verifies in the solver's own container, so the replay comes first, in the same one.
1. ``fail WHAT``: prints ``envfactory-setup-failed: WHAT`` on stderr and exits 125, so
   the runner tells a broken setup from the verifier's own exit status (`setup_failed`).
2. PATH is fixed; the entry command is taken from ``$1`` and shifted away, so ``"$@"``
   holds the staged chunks only. The entry is never interpolated into the script.
3. Inline staging: without ``base64`` or ``tar`` the script prints
   ``envfactory-inline-unavailable`` and exits 125 (`inline_unavailable`: the runner then
   brings the same tar in by ``put_archive`` and runs the script without chunks); else
   the chunks are decoded and untarred at ``/``. Either way the files land under the
   stage directory ``/.envfactory-stage-<token>/`` (`staged_tar`): ``ws/<i>/<name>`` for
   workspace path i, ``verifier/`` for the verifier.
4. The workspace is swapped in: each declared path becomes the state's copy — merged
   into the folder there when both are folders (entries only the image has removed,
   the state's moved in, folders both have kept: `MERGE_FUNCTION` says why), else
   removed and the copy, if any, moved into place. A path the state lacks stays absent,
   whatever the pristine image holds there.
5. The verifier is placed (`_place_verifier`). envfactory: whatever the state holds at
   the verifier directory and the reward directory is removed, the staged directory is
   moved there and the reward directory created afresh by root, mode 0755. Harbor: the
   files are copied over what is there (as Harbor's upload does) and only
   ``reward.json`` and ``reward.txt`` are removed from the reward directory, as Harbor's
   verifier does before each run; whatever else the state left there stays.
6. ``cd`` into the verifier directory, then into the verifier's ``cwd`` if it has one
   and the state holds it (else ``/``).
7. The entry runs under ``/usr/bin/timeout -s KILL T [WRAP] /usr/bin/env -i PATH=…
   HOME=/root LANG=C.UTF-8 LC_ALL=C.UTF-8 VERIFIER_DIR=DIR /bin/sh -c "$entry"``: no
   variable of the image or the state, no profile file. Without a reward directory it
   is ``exec``'d, so its status is the command's.
8. With a reward directory the entry runs as a child and the reward tail follows
   (`reward_tail`): every other process in the container is killed, the other files the
   verifier left in the reward directory are printed after ``envfactory-verifier-logs:``
   (bounded: `print_logs`, evidence only), then the first
   regular file of ``reward.json``, ``reward.txt`` is printed after the line
   ``envfactory-reward-file:NAME`` (``-`` for none), at most 4 KiB read with shell
   builtins only, and the script exits with the entry's status. Every other writer is
   dead by then, so the *last* marker in the output is the tail's (`split_reward_tail`).

Why it is shaped so (`verifiers.runner`, invariants 3, 4 and 6): the verifier arrives
only now, in a directory no image holds; it runs in a clean environment nothing of the
state reaches; and the reward file is read after nothing the solver started can still
write it, by nothing (no binary) the solver could have replaced.

Quoting: every value put into generated shell goes through `shlex.quote` (a command
name through `_command`, which also quotes a word shlex leaves bare); the few words put
in unquoted are named constants of this module or of `verifiers.processes` /
`verifiers.tamper`, or an int. The markers below are used by the generator and the
parser alike, so the two cannot drift apart.
"""

from __future__ import annotations

import base64
import shlex
from collections.abc import Sequence
from typing import Literal

from envfactory.core.models import EnvironmentSpec, ExecResult, Verifier
from sandboxes.execution import KILL_GRACE_S, wrap_command

from . import archives
from .prepare import KILLS_ALL, PreparedState, Replay, archive_root
from .processes import KILL_ALL_BUT_INIT, KILL_STRAYS
from .tamper import FIXED_PATH

#: where the staged files are unpacked (not under /run: a workspace may be /run)
STAGE_PREFIX = "/.envfactory-stage-"
#: the script's ``$0``: names it in error messages and in ``ps``
ARGV0 = "envfactory-verify"
#: exit status of the setup part (steps 1–6): the entry never ran
SETUP_FAILED = 125
#: stderr prefix of a setup failure (`fail`)
SETUP_FAILED_MARK = "envfactory-setup-failed"
#: stderr line of an image that cannot unpack inline chunks (no base64 or tar)
NO_INLINE_MARK = "envfactory-inline-unavailable"
#: stdout line prefix of the reward tail, followed by the reward file's name
REWARD_MARK = "envfactory-reward-file:"
#: what the tail names after the marker when the directory holds no reward file
NO_REWARD_FILE = "-"
#: Harbor's reward files, in the order the tail looks for them: Harbor reads
#: ``reward.json`` when it exists, else ``reward.txt`` (`Verifier.verify`, harbor 0.26.0)
REWARD_FILES = ("reward.json", "reward.txt")
#: what Harbor removes from the reward directory before each verification, as root
#: (`Verifier._remove_reward_files`, harbor 0.26.0); the rest of the directory stays
HARBOR_REMOVES = REWARD_FILES
#: what the tail exits with: 0 (a read of its own), or the entry's status saved in rc
TailStatus = Literal["0", "$rc"]

ARG_CHUNK = 100_000  # one argument stays under Linux's 128 KiB MAX_ARG_STRLEN
INLINE_MAX = 1_000_000  # all of them well under ARG_MAX


#: Lines of "$f" up to 4 KiB, with shell builtins only: no fork (what the entry left, a
#: fork bomb, may hold every pid) and no binary the state's programs, run as root by the
#: verifier, could have replaced (an attack that planted a /usr/bin/head printing 1
#: turned a failing verifier into a pass when the tail still ran `head`).
def _read_builtin(limit: int) -> str:
    return (
        '{ t=0; while IFS= read -r l || [ -n "$l" ]; do t=$((t + ${#l} + 1)); '
        f'[ $t -gt {int(limit)} ] && break; printf \'%s\\n\' "$l"; l=; done < "$f"; }}'
    )


_READ_BUILTIN = _read_builtin(4096)
#: stdout line the tail prints before the other files the verifier left in its reward
#: directory (`print_logs`): evidence for the row, never the reward
LOGS_MARK = "envfactory-verifier-logs:"
#: how many of those files, and how much of each (bytes, whole lines), the tail prints
LOG_FILES = 8
LOG_BYTES = 1024


def staged_tar(
    prepared: PreparedState, stage: str, verifier_files: dict[str, tuple[bytes, int]]
) -> bytes:
    """One tar for `/`: under the stage dir, the workspace copies (`ws/<i>/`) and the
    verifier (`verifier/`); the setup script moves them into place."""
    root = stage.lstrip("/")
    members = [
        (f"{root}/verifier/{name}", data, mode) for name, (data, mode) in verifier_files.items()
    ]
    trees = [
        (f"{root}/ws/{i}", tar) for i, (_, tar) in enumerate(prepared.workspace) if tar is not None
    ]
    return archives.combine(members, trees, dirs=[(root, 0o700), (f"{root}/verifier", 0o700)])


def inline_chunks(staged: bytes) -> list[str] | None:
    """The staged tar as base64 arguments for the script's ``"$@"``; None when there is
    nothing to stage or too much for the command line."""
    if not staged:
        return None
    text = base64.b64encode(staged).decode()
    if len(text) > INLINE_MAX:
        return None
    return [text[i : i + ARG_CHUNK] for i in range(0, len(text), ARG_CHUNK)]


def script_argv(script: str, entry: str, chunks: Sequence[str] = ()) -> list[str]:
    """The argv that runs `script`: the entry and the chunks ride as its arguments."""
    return ["/bin/sh", "-c", script, ARGV0, entry, *chunks]


def verification_argv(
    prepared: PreparedState,
    verifier: Verifier,
    vdir: str,
    stage: str,
    chunks: Sequence[str] | None,
    *,
    before: Sequence[str] = (),
) -> list[str]:
    """The argv of a real verification: `setup_script` with the reward tail where the
    verifier has a reward directory, unpacking `chunks` (None: the staged files are
    already in place) and running `before` first."""
    script = setup_script(
        prepared,
        verifier,
        vdir,
        stage,
        verifier.timeout_s,
        inline=chunks is not None,
        reward_dir=verifier.reward_dir,
        before=before,
    )
    return script_argv(script, verifier.entry, chunks or ())


def setup_script(
    prepared: PreparedState,
    verifier: Verifier,
    vdir: str,
    stage: str,
    timeout_s: int,
    *,
    inline: bool,
    wrap: str = "",
    reward_dir: str | None = None,
    before: Sequence[str] = (),
) -> str:
    """The verification script (steps 0–8 of the module docstring), for `script_argv`.

    `wrap` (shell words, already quoted by the caller) goes between the timeout and the
    clean environment: `verifiers.surface` puts its tracer there, so a traced run is
    staged exactly like a real one. With `reward_dir`, the entry runs as a child and the
    script ends with the reward tail, so the reward file is read without a second exec.
    `before`: lines run first, with the image's environment (`replay_lines`)."""
    lines = [
        *before,
        f"fail() {{ printf '%s: %s\\n' {SETUP_FAILED_MARK} \"$1\" >&2; exit {SETUP_FAILED}; }}",
        f"PATH={shlex.quote(FIXED_PATH)}; export PATH; entry=$1; shift",
    ]
    if inline:
        lines += _unpack_lines()
    lines += _workspace_lines(prepared, stage)
    lines += _place_verifier(prepared, verifier, vdir, stage)
    lines.append(f"cd -- {shlex.quote(vdir)} || fail 'no verifier dir'")
    if verifier.cwd:  # the harness's convention; a state without that directory gets `/`
        lines.append(f"cd -- {shlex.quote(verifier.cwd)} 2>/dev/null || cd /")
    run = _entry_run(vdir, timeout_s, wrap)
    if reward_dir is None:
        lines.append(f"exec {run}")
    else:  # the entry as a child: this shell then reads the reward file (one exec in all)
        lines += [run, "rc=$?", reward_tail(reward_dir, "$rc")]
    return "\n".join(lines)


def _unpack_lines() -> list[str]:
    """Step 3: the staged tar from "$@", or the mark that this image cannot unpack it."""
    return [
        "command -v base64 >/dev/null 2>&1 && command -v tar >/dev/null 2>&1 || "
        f"{{ echo {NO_INLINE_MARK} >&2; exit {SETUP_FAILED}; }}",
        "printf %s \"$@\" | base64 -d | tar -x -f - -C / || fail 'unpacking the staged files'",
    ]


#: `ef_merge STAGED LIVE`: make the folder LIVE hold exactly what STAGED holds, keeping
#: every folder both have (entries only one has are removed or moved in). Replacing a
#: folder the image also holds would make it opaque, and fuse-overlayfs (1.10) then
#: shows the image's file again once a file of the state is deleted there (`git checkout`
#: cannot re-create it: "File exists"). Kept folders take the state's mode, owner and time.
MERGE_FUNCTION = r"""ef_merge() {
  m=$(stat -c '%a %u:%g %Y' "$1") || return 1
  for e in "$2"/* "$2"/.[!.]* "$2"/..?*; do
    [ -e "$e" ] || [ -L "$e" ] || continue
    [ -e "$1/${e##*/}" ] || [ -L "$1/${e##*/}" ] || rm -rf -- "$e" || return 1
  done
  for e in "$1"/* "$1"/.[!.]* "$1"/..?*; do
    [ -e "$e" ] || [ -L "$e" ] || continue
    t="$2/${e##*/}"
    if [ -d "$e" ] && [ ! -L "$e" ] && [ -d "$t" ] && [ ! -L "$t" ]; then
      ( ef_merge "$e" "$t" ) || return 1
      continue
    fi
    if { [ -d "$t" ] && [ ! -L "$t" ]; } || { [ -d "$e" ] && [ ! -L "$e" ]; }; then
      rm -rf -- "$t" || return 1
    fi
    mv -f -- "$e" "$t" || return 1
  done
  set -- "$2" $m
  chmod "$2" "$1" && chown "$3" "$1" && { touch -d "@$4" "$1" 2>/dev/null || true; }
}"""


def _workspace_lines(prepared: PreparedState, stage: str) -> list[str]:
    """Step 4: each workspace path made the state's copy: merged into the folder there
    when both are folders (`MERGE_FUNCTION`), else removed and the copy (if any) moved
    in."""
    lines: list[str] = []
    if any(tar is not None for _, tar in prepared.workspace):
        lines.append(MERGE_FUNCTION)
    for i, (path, tar) in enumerate(prepared.workspace):
        q = shlex.quote(path)
        if tar is None:
            lines.append(f"rm -rf -- {q} || fail {shlex.quote('removing ' + path)}")
            continue
        src = shlex.quote(f"{stage}/ws/{i}/{archive_root(path)}")
        placing = shlex.quote("placing " + path)
        lines.append(
            f"if [ -d {q} ] && [ ! -L {q} ] && [ -d {src} ] && [ ! -L {src} ]; then "
            f"ef_merge {src} {q} || fail {placing}; "
            f"else rm -rf -- {q} && {_mkdir_parent(path)}mv -- {src} {q} || fail {placing}; fi"
        )
    return lines


def _place_verifier(
    prepared: PreparedState, verifier: Verifier, vdir: str, stage: str
) -> list[str]:
    """Step 5: shell lines that put the verifier files at `vdir` and prepare the reward
    directory.

    envfactory semantics: whatever the state holds at `vdir` or in the reward directory is
    removed first. Harbor semantics: the files are copied over what is there (as Harbor's
    upload does) and only Harbor's reward files are removed from the reward directory
    (`HARBOR_REMOVES`); a removal that fails (a directory by that name) fails the setup,
    as it errors Harbor's trial."""
    src, dst = shlex.quote(stage + "/verifier"), shlex.quote(vdir)
    rd = shlex.quote(verifier.reward_dir) if verifier.reward_dir else None
    if prepared.semantics == "harbor":
        lines = [
            f"mkdir -p -- {dst} && cp -a -- {src}/. {dst}/ && rm -rf -- {shlex.quote(stage)} "
            "|| fail 'placing the verifier'"
        ]
        if rd and verifier.reward_dir:
            base = verifier.reward_dir.rstrip("/")
            stale = " ".join(shlex.quote(f"{base}/{n}") for n in HARBOR_REMOVES)
            lines.append(
                f"mkdir -p -- {rd} && chown root:root -- {rd} && chmod 0755 -- {rd} "
                f"&& rm -f -- {stale} || fail 'preparing the reward directory'"
            )
        return lines
    # Each command is a process started in a fresh container: as few as the order allows.
    # A directory of our own random name cannot be in the state: nothing to remove there.
    lines = [
        *([f"rm -rf -- {dst}"] if verifier.mount_path else []),
        f"{_mkdir_parent(vdir)}mv -- {src} {dst} || fail 'placing the verifier'",
        f"rm -rf -- {shlex.quote(stage)} {rd or ''}",
    ]
    if rd:  # created afresh by root: root-owned, and -m sets its mode whatever the umask
        lines.append(f"mkdir -p -m 0755 -- {rd} || fail 'preparing the reward directory'")
    return lines


def _entry_run(vdir: str, timeout_s: int, wrap: str) -> str:
    """Step 7: the entry under a hard timeout and a clean environment."""
    env = " ".join(
        shlex.quote(e)
        for e in (
            f"PATH={FIXED_PATH}",
            "HOME=/root",
            "LANG=C.UTF-8",
            "LC_ALL=C.UTF-8",
            f"VERIFIER_DIR={vdir}",
        )
    )
    return (
        f"/usr/bin/timeout -s KILL {int(timeout_s)} {wrap + ' ' if wrap else ''}"
        f'/usr/bin/env -i {env} /bin/sh -c "$entry"'
    )


def replay_lines(replay: Sequence[Replay], spec: EnvironmentSpec) -> tuple[list[str], float]:
    """Step 0: a harbor row's recipe as shell lines run before the verification's setup,
    each entry as `runner.replay_state` would exec it (root, its workdir, the image's
    environment, its own timeout, no input; its output dropped), and the seconds they
    may take."""
    lines: list[str] = []
    budget = 0.0
    secs = spec.limits.exec_timeout_s
    for entry in replay:
        if entry == KILLS_ALL:  # a shell of its own: its `set --` leaves "$@" alone
            lines.append(f"/bin/sh -c {shlex.quote(KILL_STRAYS)}")
            continue
        run = shlex.join(wrap_command(list(entry.argv), secs))
        lines.append(
            f"( cd -- {shlex.quote(entry.workdir)} && exec {run} ) </dev/null >/dev/null 2>&1"
        )
        budget += secs + KILL_GRACE_S
    return lines, budget


def replay_then_kill(argv: Sequence[str]) -> str:
    """One recipe entry followed, in the same shell, by the kill of every process it left
    (`KILLS_ALL` after it, in an exec'd replay)."""
    return f"{_command(argv)} </dev/null\n{KILL_STRAYS}"


def reward_tail(reward_dir: str, status: TailStatus) -> str:
    """Step 8: shell that ends every process but itself (and what keeps the container
    alive), then prints the reward file (`print_reward_file`) and exits with `status`.
    Printed last, after every other writer is dead, so the last marker in the output is
    this one."""
    return f"{KILL_ALL_BUT_INIT}\n{print_logs(reward_dir)}\n{print_reward_file(reward_dir, status)}"


def print_logs(reward_dir: str) -> str:
    """Shell that prints `LOGS_MARK`, then each regular file (no link) the reward directory
    and its subdirectories hold besides the reward files — at most `LOG_FILES`, each as
    ``=== PATH`` and its first `LOG_BYTES` — with shell builtins only, like the reward."""
    d = shlex.quote(reward_dir.rstrip("/"))
    return (
        f"printf '\\n%s\\n' {shlex.quote(LOGS_MARK)}; n=0\n"
        f"for f in {d}/* {d}/*/*; do\n"
        '  [ -f "$f" ] && [ ! -L "$f" ] || continue\n'
        f"  case ${{f##*/}} in {'|'.join(REWARD_FILES)}) continue ;; esac\n"
        f"  n=$((n + 1)); [ $n -gt {LOG_FILES} ] && break\n"
        "  printf '=== %s\\n' \"$f\"\n"
        f"  {_read_builtin(LOG_BYTES)}\n"
        "done"
    )


def print_reward_file(reward_dir: str, status: TailStatus) -> str:
    """Shell that prints the reward marker, the reward file's name and at most 4 KiB of
    it — or the marker and `NO_REWARD_FILE` when there is none — and exits with `status`.
    Run on its own only where nothing else could still write the file."""
    d = shlex.quote(reward_dir.rstrip("/"))
    files = " ".join(f"{d}/{shlex.quote(name)}" for name in REWARD_FILES)
    mark = shlex.quote(REWARD_MARK)
    return (
        f"for f in {files}; do\n"
        f'  [ -f "$f" ] || continue; printf \'\\n%s%s\\n\' {mark} "${{f##*/}}"\n'
        f"  {_READ_BUILTIN}\n"
        f"  exit {status}\n"
        f"done\nprintf '\\n%s%s\\n' {mark} {shlex.quote(NO_REWARD_FILE)}; exit {status}"
    )


def split_reward_tail(res: ExecResult) -> tuple[ExecResult, str | None, bool]:
    """The verifier's own result, what the reward tail read ("NAME\\nBODY"; None: no
    reward file), and whether the tail ran at all (its marker is the last in the output)."""
    cut = res.stdout.rfind("\n" + REWARD_MARK)
    if cut < 0:
        return res, None, False
    found = res.stdout[cut + 1 + len(REWARD_MARK) :]
    text = None if found == NO_REWARD_FILE + "\n" else found
    return res.model_copy(update={"stdout": res.stdout[:cut]}), text, True


def split_logs(res: ExecResult) -> tuple[ExecResult, str | None]:
    """A result whose reward tail was split off (`split_reward_tail`) without the files
    the tail printed (`print_logs`), and those files (None: the tail printed none)."""
    cut = res.stdout.rfind(f"\n{LOGS_MARK}\n")
    if cut < 0:
        return res, None
    logs = res.stdout[cut + len(LOGS_MARK) + 2 :].rstrip("\n")
    return res.model_copy(update={"stdout": res.stdout[:cut]}), logs or None


def setup_failed(res: ExecResult) -> bool:
    """The script's setup part failed (`fail`): the entry never ran."""
    return res.exit_code == SETUP_FAILED and SETUP_FAILED_MARK in res.stderr


def inline_unavailable(res: ExecResult) -> bool:
    """The image has no base64 or tar: the staged tar must come in by `put_archive`."""
    return res.exit_code == SETUP_FAILED and NO_INLINE_MARK in res.stderr


def _command(argv: Sequence[str]) -> str:
    """`argv` as the words of a command. `shlex.quote` leaves a word of safe characters
    bare, and a bare word in command position can be a reserved word (``if``) or an
    assignment (``A=b``): the command name is always single-quoted."""
    words = [shlex.quote(w) for w in argv]
    if words and words[0] == argv[0]:  # all safe characters, no quote: wrap it as is
        words[0] = f"'{argv[0]}'"
    return " ".join(words)


def _mkdir_parent(path: str) -> str:
    """`mkdir -p PARENT && ` for a path below a subdirectory; nothing (no process) for a
    path directly under `/`, whose parent always exists."""
    parent = path.rstrip("/").rsplit("/", 1)[0] or "/"
    return "" if parent == "/" else f"mkdir -p -- {shlex.quote(parent)} && "
