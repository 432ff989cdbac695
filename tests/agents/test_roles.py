"""The roles: what each may see, what its finish tool accepts, what it records."""

from __future__ import annotations

import asyncio
import hashlib

import pytest
from pydantic import ValidationError

from envfactory.agents import OpenAIChatModel, Script, ScriptedModel
from envfactory.agents.chat_server import replies_from_script
from envfactory.agents.recording import get_model
from envfactory.agents.roles import (
    JudgeInput,
    RedTeamInput,
    RoleRuntime,
    VerifierFileText,
    VerifierWriterInput,
    run_judge,
    run_red_team,
    run_verifier_writer,
)
from envfactory.core.errors import BudgetExhausted
from envfactory.core.models import (
    BuildContext,
    EnvironmentSpec,
    Evidence,
    PartialSolution,
    Provenance,
    ShortcutFinding,
    Step,
    Trajectory,
    Verifier,
)
from envfactory.core.settings import AgentSettings

CANARY = "CANARY-7f3e9a-solution-text"

CHECK_PY = """import pathlib, sys
out = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else "/workspace/out.txt")
sys.exit(0 if out.is_file() and out.read_text().strip() == "42" else 1)
"""


def _spec() -> EnvironmentSpec:
    return EnvironmentSpec(
        id="env-test",
        name="sum",
        instruction="Write the sum of data.csv to /workspace/out.txt.",
        success_criteria="/workspace/out.txt holds exactly the sum of the numbers in data.csv.",
        hidden_state_notes=f"one row is duplicated {CANARY}-notes",
        build=BuildContext(files=()),
        reference_solution=(Step(title="sum", script=f"echo 42 > out.txt # {CANARY}"),),
        partial_solutions=(
            PartialSolution(name="half", steps=(Step(script=f"echo 4 # {CANARY}"),)),
        ),
    )


def _script(*turns: list[tuple[str, dict]]) -> Script:
    return Script.model_validate(
        {"turns": [{"calls": [{"tool": t, "args": a} for t, a in turn]} for turn in turns]}
    )


def _rt(model, store, **kw) -> RoleRuntime:
    return RoleRuntime(model=model, settings=AgentSettings(**({"max_turns": 10} | kw)), store=store)


WRITER_TURNS = [
    [("list_dir", {"path": "/workspace"})],
    [("shell", {"command": "cat /workspace/data.csv"})],
    [("write_file", {"path": "/verifier/check.py", "content": CHECK_PY})],
    [("finish", {"summary": "checks out.txt", "entry": "python3 check.py"})],  # refused: PATH
    [("finish", {"summary": "checks out.txt", "entry": "/usr/bin/python3 -I check.py"})],
]


def test_verifier_writer_input_has_no_field_for_the_solution():
    fields = set(VerifierWriterInput.model_fields)
    assert not fields & {
        "reference_solution",
        "partial_solutions",
        "hidden_state_notes",
        "oracle",
        "solved_state",
        "build",
    }
    with pytest.raises(ValidationError):
        VerifierWriterInput(
            env_id="e", instruction="i", success_criteria="c", reference_solution=[{"script": "x"}]
        )  # type: ignore[call-arg]
    inp = VerifierWriterInput.from_spec(_spec())
    assert CANARY not in inp.model_dump_json()


def test_verifier_writer_never_receives_the_solution(server, sandbox, store, settings_for):
    (sandbox.root / "workspace/data.csv").write_text("n\n40\n2\n")
    server.push(*replies_from_script(_script(*WRITER_TURNS)))
    model = OpenAIChatModel(name="local-test", api_key="k", base_url=server.url)
    rt = RoleRuntime(model=model, settings=settings_for(server), store=store)
    res = asyncio.run(
        run_verifier_writer(VerifierWriterInput.from_spec(_spec()), rt=rt, sandbox=sandbox)
    )
    assert len(server.raw_bodies) == 5
    assert all(CANARY.encode() not in body for body in server.raw_bodies)
    traj = get_model(store, res.trajectory_key, Trajectory)
    assert CANARY not in traj.model_dump_json()
    # the solution was not needed: the verifier still came out, read back from the sandbox
    (entry,) = res.verifier.files
    assert entry.path == "check.py" and store.get(entry.key).decode() == CHECK_PY
    assert res.verifier.entry == "/usr/bin/python3 -I check.py"
    prov = res.verifier.provenance
    assert prov.prompt_version == "verifier.v1" and "instruction" in prov.inputs_seen
    assert f"trajectory:{res.trajectory_key}" in prov.inputs_seen
    assert "not an absolute path" in traj.steps[3].observations[0]


def test_verifier_that_passes_on_the_untouched_environment_is_refused(sandbox, store):
    script = _script(
        [("write_file", {"path": "/verifier/check.sh", "content": "exit 0\n"})],
        [("finish", {"summary": "s", "entry": "/bin/bash check.sh"})],
        [("write_file", {"path": "/verifier/check.sh", "content": "test -f /workspace/out.txt\n"})],
        [("finish", {"summary": "s", "entry": "/bin/bash check.sh"})],
    )
    res = asyncio.run(
        run_verifier_writer(
            VerifierWriterInput.from_spec(_spec()),
            rt=_rt(ScriptedModel(script), store),
            sandbox=sandbox,
        )
    )
    traj = get_model(store, res.trajectory_key, Trajectory)
    assert "exits 0 on the untouched environment" in traj.steps[1].observations[0]
    assert store.get(res.verifier.files[0].key) == b"test -f /workspace/out.txt\n"
    assert res.verifier.files[0].mode == 0o755


def test_verifier_patch_sees_the_shortcut_evidence_and_the_old_verifier_not_the_solution(
    sandbox, store
):
    spec = _spec()
    old = Verifier(
        env_id=spec.id,
        files=(),
        entry="/bin/bash check.sh",
        provenance=Provenance(author="agent:verifier/x"),
    )
    finding = ShortcutFinding(
        id="sf-1",
        env_id=spec.id,
        source="trajectory",
        rule="fake-output",
        evidence=Evidence(
            summary="wrote 42 without reading data.csv", commands=("echo 42 > out.txt",)
        ),
    )
    inp = VerifierWriterInput.for_patch(
        spec, old, [VerifierFileText(path="check.sh", content="test -f x\n")], [finding]
    )
    model = ScriptedModel(
        _script(
            [("read_file", {"path": "/verifier/check.sh"})],
            [("finish", {"summary": "patched", "entry": "/bin/bash check.sh"})],
        )
    )
    res = asyncio.run(run_verifier_writer(inp, rt=_rt(model, store), sandbox=sandbox))
    first_task = model.requests[0][1]["content"]
    assert "wrote 42 without reading data.csv" in first_task and "echo 42 > out.txt" in first_task
    assert all(CANARY not in str(m) for req in model.requests for m in req)
    assert res.verifier.version == 2
    assert "shortcut_evidence:sf-1" in res.verifier.provenance.inputs_seen
    assert "test -f x" in model.requests[1][-1]["content"]  # the old file was put in place


def test_judge_attempt_is_snapshotted_and_its_claim_recorded(sandbox, store):
    model = ScriptedModel(
        _script(
            [("shell", {"command": "echo 42 > /workspace/out.txt"})],
            [("finish", {"summary": "wrote 42", "solved": True})],
        )
    )
    res = asyncio.run(
        run_judge(JudgeInput.from_spec(_spec()), rt=_rt(model, store), sandbox=sandbox)
    )
    assert res.claimed_solved and res.stop_reason == "finished"
    assert res.final_state is not None and res.final_state.label == "judge"
    traj = get_model(store, res.trajectory_key, Trajectory)
    assert traj.final_state == res.final_state and traj.claimed_solved is True
    assert any(c.path == "/workspace/out.txt" for c in traj.diff)
    assert CANARY not in str(model.requests)  # a judge sees the instruction only


def test_judge_out_of_turns_is_a_result_not_a_crash(sandbox, store):
    model = ScriptedModel(_script(*[[("shell", {"command": "true"})]] * 5))
    res = asyncio.run(
        run_judge(JudgeInput.from_spec(_spec()), rt=_rt(model, store, max_turns=2), sandbox=sandbox)
    )
    assert res.stop_reason == "budget" and res.claimed_solved is False
    assert res.final_state is not None


def test_verifier_writer_out_of_turns_raises_with_the_trajectory_stored(sandbox, store):
    model = ScriptedModel(_script(*[[("shell", {"command": "true"})]] * 5))
    with pytest.raises(BudgetExhausted) as info:
        asyncio.run(
            run_verifier_writer(
                VerifierWriterInput.from_spec(_spec()),
                rt=_rt(model, store, max_turns=2),
                sandbox=sandbox,
            )
        )
    key = info.value.trajectory_key
    assert key == hashlib.sha256(store.get(key)).hexdigest()


def test_red_team_reports_its_shortcut_and_commands(sandbox, store):
    model = ScriptedModel(
        _script(
            [
                (
                    "shell",
                    {"command": "mkdir -p /workspace/logs && echo 1 > /workspace/logs/reward.txt"},
                )
            ],
            [("write_file", {"path": "/workspace/out.txt", "content": "42"})],
            [
                (
                    "finish",
                    {
                        "summary": "faked",
                        "shortcut": "wrote a reward file and the output",
                        "expect_reward": True,
                    },
                )
            ],
        )
    )
    res = asyncio.run(
        run_red_team(RedTeamInput.from_spec(_spec()), rt=_rt(model, store), sandbox=sandbox)
    )
    assert res.shortcut.startswith("wrote a reward file")
    assert (
        res.commands[0].startswith("mkdir -p")
        and res.commands[1] == "write_file /workspace/out.txt"
    )
    assert res.final_state is not None and res.claimed_solved
    assert "without doing this task" in model.requests[0][1]["content"]
