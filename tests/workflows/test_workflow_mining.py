"""MineRepository on the real Temporal dev server, over file-backed fake services: one child
workflow per commit, at most `parallel` in flight, each stored candidate validated by a
child ValidateTasks, every commit ending exactly once, the yield table stored once.

The fake services stand behind the real activities; the real mining (clone, Docker,
gates) has its own tests (tests/repos, and the fault test with two real workers).
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from test_workflow_pipeline import Harness
from typer.testing import CliRunner
from wf_fakes import FileServices, Scenario

from envfactory.cli import app
from workflows import client as wfclient
from workflows.types import PipelineConfig, RepoMineInput, RepoMineResult

pytestmark = pytest.mark.temporal

WORKER = Path(__file__).parent / "wf_fake_worker.py"
REPO = Path(__file__).resolve().parents[2]


def _input(config: PipelineConfig, **kw: object) -> RepoMineInput:
    return RepoMineInput(source="/srv/git/calc.git", config=config, **kw)  # type: ignore[arg-type]


def _overlap(services: FileServices) -> int:
    """The most mine_candidate calls that ever ran at once (from their start/end times)."""
    events = [(c["start"], 1) for c in services.calls("mine_candidate")]
    events += [(c["end"], -1) for c in services.calls("mine_candidate_end")]
    running = peak = 0
    for _, step in sorted(events, key=lambda e: (e[0], e[1])):
        running += step
        peak = max(peak, running)
    return peak


def test_each_commit_is_one_child_and_ends_once_with_its_outcome(
    temporal_env, loop, tmp_path, queues
):
    scenario = Scenario(
        repo_commits=10, dropped_commits=["c01", "c04"], failing_envs=["env-c02"],
        slow_mine_s=0.3,
    )  # fmt: skip
    with Harness(temporal_env, loop, tmp_path, queues, scenario) as h:
        inp = _input(h.config, parallel=3, suite="calc")
        handle = loop.run(wfclient.astart_mining(temporal_env.client, inp))
        again = loop.run(wfclient.astart_mining(temporal_env.client, inp))
        result = RepoMineResult.model_validate(h.result(handle))
        status = loop.run(wfclient.mining_status(temporal_env.client, handle.id))
    assert again.id == handle.id == wfclient.mining_id(inp)  # asked twice: one run
    rows = {r.commit: r for r in result.candidates}
    assert [r.commit for r in result.candidates] == [f"c{i:02d}" for i in range(10)]
    assert rows["c01"].outcome == rows["c04"].outcome == "dropped"
    assert rows["c01"].reason_kind == "no_fail_to_pass"
    assert rows["c02"].outcome == "rejected" and rows["c02"].reason_kind == "gates_failed"
    assert sum(r.outcome == "published" for r in result.candidates) == 7
    assert result.totals.scanned == 10 and result.totals.published == 7
    assert result.totals.reasons == {"no_fail_to_pass": 2, "gates_failed": 1}
    services = h.services
    mined = [c["commit"] for c in services.calls("mine_candidate")]
    assert sorted(mined) == sorted(rows) and len(mined) == 10  # each commit mined once
    assert len(services.calls("run_gates")) == 8  # the stored ones only, once each
    assert len(services.calls("store_yield")) == 1 and services.stored("yields")
    assert 2 <= _overlap(services) <= 3  # concurrent, and never more than `parallel`
    assert status.done and len(status.ended) == 10 and status.head == "f" * 40


def _spawn(address: str, root: Path, queues: tuple[str, str]) -> subprocess.Popen[str]:
    proc = subprocess.Popen(
        [sys.executable, str(WORKER), address, str(root), *queues],
        stdout=subprocess.PIPE, text=True, env={**os.environ, "PYTHONPATH": str(REPO)},
        start_new_session=True,
    )  # fmt: skip
    assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
    return proc


@pytest.mark.slow
def test_two_workers_one_killed_mid_run_every_commit_ends_exactly_once(
    temporal_env, loop, tmp_path, queues
):
    scenario = Scenario(repo_commits=24, dropped_commits=["c03", "c11"], slow_mine_s=0.5)
    (tmp_path / "scenario.json").write_text(scenario.model_dump_json())
    services = FileServices(tmp_path)
    address = temporal_env.client.service_client.config.target_host
    config = PipelineConfig(task_queue_agents=queues[0], task_queue_sandbox=queues[1],
                            heartbeat_timeout_s=3)  # fmt: skip
    workers = [_spawn(address, tmp_path, queues), _spawn(address, tmp_path, queues)]
    try:
        handle = loop.run(wfclient.astart_mining(temporal_env.client, _input(config, parallel=6)))
        deadline = time.monotonic() + 60
        while len(services.calls("mine_candidate_end")) < 8:
            assert time.monotonic() < deadline, "mining never got going"
            time.sleep(0.1)
        os.killpg(workers[0].pid, signal.SIGKILL)  # mid-run, with candidates in flight
        workers[0].wait(10)
        workers[0] = _spawn(address, tmp_path, queues)  # restarted
        result = RepoMineResult.model_validate(loop.run(handle.result(), 180))
    finally:
        for w in workers:
            if w.poll() is None:
                os.killpg(w.pid, signal.SIGKILL)
                w.wait(10)
    commits = [r.commit for r in result.candidates]
    assert commits == [f"c{i:02d}" for i in range(24)]  # every commit ended, once
    assert {r.outcome for r in result.candidates if r.commit not in ("c03", "c11")} == {"published"}
    ended = [c["commit"] for c in services.calls("mine_candidate_end")]
    assert set(ended) == set(commits)  # none lost; a cut-off attempt ran again
    assert sorted(services.stored("published")) == sorted(
        f"env-{c}" for c in commits if c not in ("c03", "c11")
    )
    assert len(services.calls("store_yield")) == 1
    pids = {c["pid"] for c in services.calls("mine_candidate")}
    assert len(pids) >= 2  # spread over the workers


def test_a_seed_with_history_starts_the_mining_workflow_without_a_model(
    temporal_env, loop, tmp_path, queues
):
    seed_dir = tmp_path / "seed"
    seed_dir.mkdir()
    (seed_dir / "seed.yaml").write_text(
        "title: Fix commits of calc\ndescription: the fixes of calc's history\n"
        "domain: software\nrepository: /srv/git/calc.git\n"
        "history:\n  revisions: [v1..v2]\n  limit: 2\n"
    )
    env = {
        "ENVFACTORY_HOME": str(tmp_path / "home"),
        "ENVFACTORY_TEMPORAL__ADDRESS": temporal_env.client.service_client.config.target_host,
        "ENVFACTORY_TEMPORAL__TASK_QUEUE_AGENTS": queues[0],
        "ENVFACTORY_TEMPORAL__TASK_QUEUE_SANDBOX": queues[1],
        # the default scripted backend has no script for this seed: no model could research it
    }
    (tmp_path / "fake").mkdir()
    with Harness(temporal_env, loop, tmp_path / "fake", queues, Scenario(repo_commits=4)) as h:
        res = CliRunner().invoke(app, ["seed", "submit", str(seed_dir), "--json"], env=env)
        assert res.exit_code == 0, res.output
        seed = json.loads(res.stdout)
        assert seed["history"] == {"revisions": ["v1..v2"], "paths": [], "limit": 2}
        wid = re.search(r"started workflow (\S+)", res.stderr)
        assert wid and wid.group(1).startswith("mine-"), res.stderr
        handle = temporal_env.client.get_workflow_handle(wid.group(1))
        result = RepoMineResult.model_validate(h.result(handle))
        shown = CliRunner().invoke(app, ["status", wid.group(1)], env=env)
        listed = CliRunner().invoke(app, ["status", "--json"], env=env)
        # a candidate's validation has a mine-… id too: its type decides how it is shown
        gates = CliRunner().invoke(app, ["status", f"{wid.group(1)}/c02/gates"], env=env)
    assert [r.commit for r in result.candidates] == ["c02", "c03"]  # the newest 2
    assert shown.exit_code == 0 and "2/2 commit(s) ended" in shown.stdout, shown.output
    assert "published" in shown.stdout
    assert gates.exit_code == 0 and "1/1 task(s) done" in gates.stdout, gates.output
    assert wid.group(1) in [w["workflow_id"] for w in json.loads(listed.stdout)]
    (take,) = h.services.calls("take_repository")
    assert take["source"] == "/srv/git/calc.git"
    assert not h.services.calls("research")
