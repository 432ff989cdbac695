"""The runner and the gates when the sandbox fails: never a reward 0 for a broken sandbox.

Regression of issue 15: a dead or fork-bombed sandbox answered every exec with 125 and
no error, which the runner would have scored as the verifier's "no" (reward 0 — and a 0
passes the no-op and probe rows).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import docker
import pytest

from envfactory.core.errors import SandboxBroken
from envfactory.core.models import GateVerdict
from sandboxes import DockerEngine
from sandboxes.labels import PURPOSE
from verifiers.gates import GateInput, run_gates
from verifiers.runner import verify_state

from .sumtask import SPEC, make_verifier, sound_verifier

pytestmark = [pytest.mark.docker, pytest.mark.slow]


class DyingVerifications:
    """The real engine, except that the first `times` verification containers die as they
    start (the runtime crashed under them). A seam, not a patch: an engine of its own is
    passed in, on a Docker client whose `start` is followed by a kill."""

    def __init__(self, engine: DockerEngine, times: int) -> None:
        self.left, self.killed = times, 0
        self._lock = threading.Lock()
        client = _KillingClient(engine.client, self._doomed, self._spared)
        self.engine = DockerEngine(engine.settings, client=client, run_id=engine.run_id)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.engine, name)

    def _doomed(self, labels: dict[str, str]) -> bool:
        with self._lock:
            doomed = labels.get(PURPOSE) == "verify" and self.left > 0
            self.left -= doomed
            self.killed += doomed
        return doomed

    def _spared(self) -> None:
        with self._lock:
            self.left += 1
            self.killed -= 1


class _KillingClient:
    def __init__(
        self,
        client: docker.DockerClient,
        doomed: Callable[[dict[str, str]], bool],
        spared: Callable[[], None],
    ):
        self._client, self.api = client, _KillingApi(client.api, doomed, spared)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._client, name)


class _KillingApi:
    def __init__(
        self, api: Any, doomed: Callable[[dict[str, str]], bool], spared: Callable[[], None]
    ) -> None:
        self._api, self._doomed, self._spared = api, doomed, spared

    def __getattr__(self, name: str) -> Any:
        return getattr(self._api, name)

    def start(self, container: str, *a: Any, **kw: Any) -> None:
        self._api.start(container, *a, **kw)
        if self._doomed(self._api.inspect_container(container)["Config"]["Labels"] or {}):
            try:
                self._api.kill(container)
            except docker.errors.APIError:  # it ended first (seen once, in a fresh
                self._spared()  # container): the next verification dies instead


def _verify(engine, image, spec, verifier, files):  # type: ignore[no-untyped-def]
    return verify_state(
        engine, state_image=image, pristine_image=image, spec=spec, verifier=verifier, files=files
    )


def test_a_sandbox_that_cannot_run_the_verifier_raises_instead_of_scoring_0(
    docker_engine, sum_image, files
):  # type: ignore[no-untyped-def]
    engine = DyingVerifications(docker_engine, times=1)
    with pytest.raises(SandboxBroken) as err:
        _verify(engine, sum_image, SPEC, make_verifier(files, "sleep 5; exit 1"), files)
    assert err.value.reason == "container_dead" and engine.killed == 1


def test_a_verification_past_the_disk_quota_is_reward_0_and_says_so(
    docker_engine, sum_image, files
):  # type: ignore[no-untyped-def]
    spec = SPEC.model_copy(update={"limits": SPEC.limits.model_copy(update={"disk_mb": 64})})
    v = make_verifier(files, "dd if=/dev/zero of=/tmp/fill bs=1M count=1024 status=none; exit 0")
    res = _verify(docker_engine, sum_image, spec, v, files)
    assert (res.reward, res.disk_exceeded, res.exit_code) == (0, True, None)
    assert any("disk quota" in n for n in res.notes)


def test_the_reward_file_is_read_even_when_the_entry_left_a_fork_bomb(
    docker_engine, sum_image, files
):  # type: ignore[no-untyped-def]
    spec = SPEC.model_copy(update={"limits": SPEC.limits.model_copy(update={"pids": 32})})
    bomb = (
        "import os, time\nwhile True:\n    try:\n        os.fork() or (time.sleep(1000), "
        "os._exit(0))\n    except OSError:\n        time.sleep(0.05)\n"
    )
    entry = (
        f"echo 1 > /logs/verifier/reward.txt; setsid python3 -c '{bomb}' >/dev/null 2>&1 & "
        "sleep 2; exit 0"
    )
    v = make_verifier(files, entry).model_copy(update={"reward_dir": "/logs/verifier"})
    res = _verify(docker_engine, sum_image, spec, v, files)
    assert (res.reward, res.reward_file) == (1, "reward.txt\n1\n")


def _gate(engine, image, files, **kw):  # type: ignore[no-untyped-def]
    return GateInput(
        engine=engine,
        spec=SPEC,
        verifier=sound_verifier(files),
        files=files,
        image=image,
        repeats=1,
        probes=(),
        concurrency=2,
        **kw,
    )


def test_the_gate_verifies_again_in_a_fresh_sandbox_when_one_broke(docker_engine, sum_image, files):  # type: ignore[no-untyped-def]
    engine = DyingVerifications(docker_engine, times=1)
    report = run_gates(_gate(engine, sum_image, files))
    assert engine.killed == 1
    assert report.verdict == GateVerdict.PASSED, report.reasons


def test_the_gate_fails_loudly_naming_the_check_when_sandboxes_keep_breaking(
    docker_engine, sum_image, files
):  # type: ignore[no-untyped-def]
    engine = DyingVerifications(docker_engine, times=1000)
    with pytest.raises(SandboxBroken, match=r"verifying [\w:-]+: twice") as err:
        run_gates(_gate(engine, sum_image, files))
    assert err.value.retryable  # the activity is retried; no report, no reward recorded
