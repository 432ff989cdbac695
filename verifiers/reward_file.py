"""Harbor's reward-file protocol: where a verification's reward file is read, and what it
is worth.

A verifier with a reward directory (`Verifier.reward_dir`, Harbor's ``/logs/verifier``)
writes ``reward.txt`` (a number) or ``reward.json`` (``{"reward": number}``) there. The
file is read once every process the entry may have left has ended, so nothing the solver
started can still change it, in one of three ways:

1. from the verification command's own output: the reward tail of its script
   (`verify_script.reward_tail`), split off by `verify_script.split_reward_tail`;
2. when the command ended before its tail (output cut at the cap, setup failed, timeout)
   and the container has stopped: by the engine from the stopped container
   (`stopped_reward_file`; a link is not followed);
3. when it ended so in a started container (exec'd verifications): by a second exec of
   the runner's own that kills every process first (`read_reward_file`), restarting the
   container when what the entry left holds every pid.

Each gives the text as the tail prints it, ``NAME\\nBODY`` (at most 4 KiB), or None
for no regular file. `reward_from_file` then decides: reward 1 iff the value is exactly
1, and 0 whatever the file says after a timeout or an output cut at the cap.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable

from envfactory.core.errors import SandboxBroken, SandboxError
from envfactory.core.models import ExecResult, Verifier
from sandboxes.protocol import Sandbox

from .verify_script import REWARD_FILES, reward_tail, split_reward_tail

_MAX_BYTES = 4096  # what the tail's builtin read keeps, read the same from a stopped box
#: how a row's runner note starts when the reward file held a graded value
GRADED_NOTE = "graded reward"


def rewarded(
    res: ExecResult, verifier: Verifier, read_again: Callable[[str], str | None]
) -> tuple[ExecResult, str | None]:
    """The verifier's own result and what its reward file held: from the command's reward
    tail, else `read_again(reward_dir)` once every process it may have left has ended; no
    file where the verifier has no reward directory."""
    if not verifier.reward_dir or res.disk_exceeded:
        return res, None
    res, reward_file, read = split_reward_tail(res)
    return res, reward_file if read else read_again(verifier.reward_dir)


def stopped_reward_file(box: Sandbox, reward_dir: str) -> str | None:
    """The reward file of a container whose processes have all ended, read by the engine:
    as the tail prints it ("name\\nbody", at most 4 KiB), None when there is no regular
    file (a link is not followed)."""
    for name in REWARD_FILES:
        try:
            body = box.read_file(f"{reward_dir.rstrip('/')}/{name}", max_bytes=_MAX_BYTES)
        except SandboxError:  # absent, or not a regular file
            continue
        return f"{name}\n{body.decode('utf-8', 'replace')}"
    return None


def read_reward_file(box: Sandbox, reward_dir: str) -> str | None:
    """What the reward file says, read by an exec of our own once every process the
    entry may have left is dead: the fallback when the verification's own exec ended
    before its reward tail."""
    argv = ["/bin/sh", "-c", reward_tail(reward_dir, "0")]
    try:
        res = box.exec(argv, timeout=30, workdir="/", user="root")
    except SandboxBroken as exc:
        if exc.reason == "disk_exceeded":
            raise
        # What the entry left running (e.g. a fork bomb) can leave no pid for our read:
        # a restart ends every process and keeps the files; a second failure is the engine's.
        box.restart()
        res = box.exec(argv, timeout=30, workdir="/", user="root")
    return split_reward_tail(res)[1] if res.exit_code == 0 else None


def reward_from_file(
    text: str | None, exit_code: int | None, timed_out: bool, reward_dir: str
) -> tuple[int, list[str]]:
    """Harbor's contract: reward.txt holds a number, reward.json {"reward": number}.
    Binary here: 1 iff the number is exactly 1. Returns (reward, notes)."""
    if timed_out:
        return 0, ["the verifier timed out: reward 0 whatever its reward file says"]
    if exit_code is None:  # cut at the output cap: the verifier may never have written it
        return 0, [
            "the verifier's output passed the cap before it ended: reward 0 whatever "
            "its reward file says (a program it ran could flood the output after "
            "writing the file itself)"
        ]
    if text is None:
        return 0, [f"the verifier wrote no reward file in {reward_dir}: reward 0"]
    name, _, body = text.partition("\n")
    value = _reward_value(name, body)
    if value is None:
        return 0, [f"{reward_dir}/{name} is not a reward ({body.strip()[:80]!r}): reward 0"]
    reward = int(value == 1.0)
    notes = []
    if value not in (0.0, 1.0):  # a graded reward: shown, though only exactly 1 is 1 here
        notes.append(f"{GRADED_NOTE} {value:g} in {name}: reward {reward} (1 only for exactly 1)")
    if exit_code != 0 and reward == 1:
        notes.append(
            f"exit status {exit_code} but {name} says {body.strip()[:20]}: "
            f"reward {reward} per the reward file"
        )
    return reward, notes


def file_value(text: str | None) -> float | None:
    """The number a reward file as the tail prints it ("NAME\\nBODY") holds, as Harbor
    reads it; None for no file or one Harbor cannot read."""
    if text is None:
        return None
    name, _, body = text.partition("\n")
    return _reward_value(name, body)


def _reward_value(name: str, body: str) -> float | None:
    """The reward Harbor takes from the file, or None where Harbor's trial errors (its
    `Verifier._parse_reward_text` / `_parse_reward_json`, harbor 0.26.0): an empty file,
    text that is not one finite number, JSON that is not an object of finite numbers
    (``true`` counts as 1, as Harbor's pydantic result model takes it). The reward is the
    object's ``"reward"``: an object without one names no reward here."""
    if not body:
        return None
    try:
        if name == "reward.json":
            data = json.loads(body)
            if not isinstance(data, dict) or not all(map(_finite_number, data.values())):
                return None
            raw = data.get("reward")
            return None if raw is None else float(raw)
        value = float(body)
    except (ValueError, TypeError):
        return None
    return value if math.isfinite(value) else None


def _finite_number(value: object) -> bool:
    return isinstance(value, (int, float)) and math.isfinite(value)
