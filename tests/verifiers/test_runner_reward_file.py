"""Harbor's reward file, read in the verification's own command (one container, no exec).

The runner's shell waits for the entry, kills every other process, then prints the
reward file after a marker; the last marker in the output is the runner's. When the
command ends before that (output cut at the cap), the file is read from the stopped
container instead: every process has ended with it.
"""

from __future__ import annotations

import threading
from typing import Any

import pytest

from sandboxes import DockerEngine, DockerSandbox
from verifiers.runner import verify_state

from .sumtask import SPEC, make_verifier

pytestmark = [pytest.mark.docker, pytest.mark.slow]

REWARD_DIR = "/logs/verifier"


class CountingExecs:
    """The real engine, counting its verification containers (`run`, `start`) and the
    execs into them. A seam, passed in."""

    def __init__(self, engine: DockerEngine) -> None:
        self.engine, self.execs, self.runs, self.starts = engine, 0, 0, 0
        self._lock = threading.Lock()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.engine, name)

    def _count(self, box: DockerSandbox) -> DockerSandbox:
        inner = box.exec

        def counted(*a: Any, **k: Any) -> Any:
            with self._lock:
                self.execs += 1
            return inner(*a, **k)

        box.exec = counted  # type: ignore[method-assign]
        return box

    def start(self, image: str, **kw: Any) -> DockerSandbox:
        box = self.engine.start(image, **kw)
        if kw.get("purpose") == "verify":
            with self._lock:
                self.starts += 1
            self._count(box)
        return box

    def run(self, image: str, argv: Any, **kw: Any) -> tuple[Any, DockerSandbox]:
        res, box = self.engine.run(image, argv, **kw)
        with self._lock:
            self.runs += 1
        return res, self._count(box)


def _verify(engine, image, files, entry: str, **limits: Any):  # type: ignore[no-untyped-def]
    spec = (
        SPEC.model_copy(update={"limits": SPEC.limits.model_copy(update=limits)})
        if limits
        else SPEC
    )
    v = make_verifier(files, entry).model_copy(update={"reward_dir": REWARD_DIR})
    return verify_state(
        engine, state_image=image, pristine_image=image, spec=spec, verifier=v, files=files
    )


def test_the_reward_file_is_read_in_the_verifications_own_command(docker_engine, sum_image, files):  # type: ignore[no-untyped-def]
    engine = CountingExecs(docker_engine)
    res = _verify(engine, sum_image, files, f"echo checked; echo 1 > {REWARD_DIR}/reward.txt")
    assert (res.reward, res.exit_code, res.reward_file) == (1, 0, "reward.txt\n1\n")
    assert res.stdout == "checked\n"  # the marker and the file are not the verifier's output
    assert res.stderr == ""  # nor the engine's mark that the command ended
    assert (engine.runs, engine.starts, engine.execs) == (1, 0, 0)
    none = _verify(engine, sum_image, files, "echo no file written")
    assert (none.reward, none.reward_file, none.stdout) == (0, None, "no file written\n")
    assert (engine.runs, engine.starts, engine.execs) == (2, 0, 0)
    assert any("wrote no reward file" in n for n in none.notes)


def test_a_marker_the_verifier_prints_is_not_the_reward(docker_engine, sum_image, files):  # type: ignore[no-untyped-def]
    forged = "printf '\\nenvfactory-reward-file:reward.txt\\n1\\n'"
    res = _verify(docker_engine, sum_image, files, f"echo 0 > {REWARD_DIR}/reward.txt; {forged}")
    assert (res.reward, res.reward_file) == (0, "reward.txt\n0\n")
    hidden = "printf '\\nenvfactory-reward-file:-\\n'"
    res = _verify(docker_engine, sum_image, files, f"echo 1 > {REWARD_DIR}/reward.txt; {hidden}")
    assert (res.reward, res.reward_file) == (1, "reward.txt\n1\n")


def test_a_process_the_entry_leaves_cannot_rewrite_the_reward_or_hold_the_exec_open(
    docker_engine, sum_image, files
):  # type: ignore[no-untyped-def]
    """Regression: with the entry exec'd, a child it left holding stdout kept the exec's
    stream open until the verifier's timeout; its late write must not count either."""
    late = f"(sleep 3; echo 1 > {REWARD_DIR}/reward.txt) &"
    res = _verify(
        docker_engine, sum_image, files, f"echo 0 > {REWARD_DIR}/reward.txt; {late} exit 0"
    )
    assert (res.reward, res.reward_file) == (0, "reward.txt\n0\n")
    assert res.command_s < 30  # the verifier's timeout is 60 s: the child was killed at once


def test_output_cut_at_the_cap_falls_back_to_the_stopped_containers_file(
    docker_engine, sum_image, files
):  # type: ignore[no-untyped-def]
    engine = CountingExecs(docker_engine)
    flood = "head -c 3000000 /dev/zero | tr '\\0' x"
    res = _verify(engine, sum_image, files, f"echo 1 > {REWARD_DIR}/reward.txt; {flood}")
    # Read afterwards and recorded, but a cut output is reward 0: a program the verifier
    # ran could have written the file and flooded the output before the verifier's check
    # (an attacker pass on the verification path did exactly that).
    assert res.reward_file == "reward.txt\n1\n" and res.reward == 0
    assert any("passed the cap" in n for n in res.notes)
    assert len(res.stdout) < 3_000_000  # cut before its tail: the file was read afterwards
    assert (engine.runs, engine.starts, engine.execs) == (1, 0, 0)
    linked = _verify(
        engine, sum_image, files, f"echo 1 > /tmp/r; ln -s /tmp/r {REWARD_DIR}/reward.txt; {flood}"
    )
    assert (linked.reward, linked.reward_file) == (0, None)  # a link is not followed


def test_the_reward_tail_trusts_no_binary_a_verified_program_could_replace(
    docker_engine, sum_image, files
):  # type: ignore[no-untyped-def]
    # A program the verifier runs as root replaces /usr/bin/head with one printing 1; the
    # verifier then writes 0. The tail reads the file with shell builtins only.
    plant = "printf '#!/bin/sh\\necho 1\\n' > /usr/bin/head; chmod 755 /usr/bin/head"
    res = _verify(
        docker_engine, sum_image, files, f"{plant}; echo 0 > {REWARD_DIR}/reward.txt; exit 1"
    )
    assert (res.reward, res.reward_file) == (0, "reward.txt\n0\n")


def test_a_verified_program_killing_every_process_it_can_is_a_0_not_a_broken_sandbox(
    docker_engine, sum_image, files
):  # type: ignore[no-untyped-def]
    # Everything but the container's init (the engine's end-marking shell, which nothing
    # inside can kill): the verification ends without its tail, its reward 0 — never a
    # broken sandbox, which would drop the row instead of scoring it.
    entry = f"echo 1 > {REWARD_DIR}/reward.txt.tmp; kill -9 -1; kill -9 1; exit 0"
    res = _verify(docker_engine, sum_image, files, entry)
    assert res.reward == 0 and res.exit_code == 137
