"""The activity table, the `PipelineServices` protocol, the services that implement it and
the activities a worker registers all agree — and old histories still read back.

No Temporal server: the activity definitions are read the way a worker reads them.
"""

from __future__ import annotations

import json
import typing
from pathlib import Path

import pytest
from temporalio.activity import _Definition
from wf_fakes import FileServices

from envfactory.core.models import CheckKind, FailureKind
from workflows.activities import PipelineActivities
from workflows.activity_table import ACTIVITIES, on_queue
from workflows.services import PipelineServices
from workflows.store_services import StoreServices
from workflows.types import GateOutcome, Queue

HISTORIES = Path(__file__).parent / "histories"


def _protocol_methods() -> set[str]:
    return {n for n, v in vars(PipelineServices).items() if callable(v) and not n.startswith("_")}


def _hints(cls: type, method: str) -> dict[str, object]:
    hints = typing.get_type_hints(getattr(cls, method))
    return {"input": hints["inp"], "output": hints["return"]}


def test_every_service_method_is_exactly_one_activity():
    names = [a.name for a in ACTIVITIES]
    methods = [a.method for a in ACTIVITIES]
    assert len(set(names)) == len(names) and len(set(methods)) == len(methods)
    assert set(methods) == _protocol_methods()


@pytest.mark.parametrize("entry", ACTIVITIES, ids=lambda a: a.name)
def test_each_entry_has_the_types_of_its_protocol_method(entry):
    assert _hints(PipelineServices, entry.method) == {"input": entry.input, "output": entry.output}


@pytest.mark.parametrize("services", [FileServices, StoreServices], ids=lambda c: c.__name__)
def test_real_and_fake_services_implement_every_method_with_the_protocols_types(services):
    for entry in ACTIVITIES:
        assert _hints(services, entry.method) == _hints(PipelineServices, entry.method), entry


def test_the_registered_activities_are_the_table_with_its_names_and_types(tmp_path):
    registered = [
        _Definition.must_from_callable(fn)
        for fn in PipelineActivities(FileServices(tmp_path)).activities()
    ]
    assert [(d.name, d.arg_types, d.ret_type) for d in registered] == [
        (a.name, [a.input], a.output) for a in ACTIVITIES
    ]
    assert all(d.is_async for d in registered)


def test_each_queue_registers_its_share_of_the_table_and_nothing_else(tmp_path):
    acts = PipelineActivities(FileServices(tmp_path))
    shares = {
        q: {_Definition.must_from_callable(fn).name for fn in acts.activities(q)} for q in Queue
    }
    assert shares == {q: {a.name for a in on_queue(q)} for q in Queue}
    assert shares[Queue.AGENTS] == {
        "research",
        "run_agent",
        "synthesize_verifier",
        "analyze_shortcuts",
    }  # LLM loops
    assert shares[Queue.AGENTS] | shares[Queue.SANDBOX] == {a.name for a in ACTIVITIES}
    assert not shares[Queue.AGENTS] & shares[Queue.SANDBOX]


def test_services_without_a_method_are_refused_when_the_activities_are_built():
    class Partial:
        def research(self, inp):  # type: ignore[no-untyped-def]
            return None

    with pytest.raises(
        TypeError, match=r"Partial has no method build\(\) for the 'build_environment'"
    ):
        PipelineActivities(Partial()).activities()  # type: ignore[arg-type]


def test_every_activity_a_recorded_history_scheduled_is_still_in_the_table():
    """Activity names live in history for ever: renaming one strands running workflows."""
    scheduled = set()
    for path in HISTORIES.glob("*.json"):
        for event in json.loads(path.read_text())["events"]:
            attrs = event.get("activityTaskScheduledEventAttributes")
            if attrs:
                scheduled.add((attrs["activityType"]["name"], attrs["taskQueue"]["name"]))
    assert scheduled, "no recorded histories"
    by_name = {a.name: a for a in ACTIVITIES}
    for name, queue in scheduled:
        assert name in by_name, name
        assert queue.startswith(by_name[name].queue.value), (name, queue)  # "agents-<tag>"


def test_a_gate_outcome_recorded_before_failures_were_typed_reads_back_into_failures():
    """Regression: replaying an old history must branch as the old code did (a probe line
    went to review; anything else started a patch round)."""
    old = {
        "report_id": "7",
        "verifier_version": 1,
        "passed": False,
        "failed_probes": ["reward-file"],
        "reasons": [
            "probe reward-file@no-op [harbor]: expected 0, got [1, 1, 1]",
            "no-op no-op: flaky, rewards [1, 0, 1]",
            "no oracle check was run",
        ],
    }
    gate = GateOutcome.model_validate_json(json.dumps(old))
    assert [(f.kind, f.check_kind, f.check) for f in gate.failures] == [
        (FailureKind.CHECK, CheckKind.PROBE, "reward-file@no-op"),
        (FailureKind.CHECK, CheckKind.NOOP, "no-op"),
        (FailureKind.MISSING_CHECK, CheckKind.ORACLE, None),
    ]
    assert gate.failures[0].semantics == "harbor" and gate.failures[1].flaky
    assert gate.reasons == tuple(old["reasons"])


def test_a_gate_outcome_round_trips_with_its_typed_failures():
    gate = GateOutcome.model_validate(
        {
            "report_id": "1",
            "verifier_version": 2,
            "passed": False,
            "reasons": ["unsolved prefix-1: expected 0, got [1]"],
        }
    )
    again = GateOutcome.model_validate_json(gate.model_dump_json())
    assert again == gate and "reasons" not in json.loads(gate.model_dump_json())
