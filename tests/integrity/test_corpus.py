"""The integrity corpus is what it claims: every verifier rewards its reference solution, and
every broken one really is broken (its exploit earns reward 1 without doing the task) while
every sound one resists the combined exploit and rewards each alternative correct solution it
ships (`alternatives/<name>.sh`: a different but valid final state).

The static tests read only the corpus files; the Docker tests verify each task's reference,
untouched and exploit states once (see `corpus_states.py`) — about 5 minutes on 2 cores.
"""

from __future__ import annotations

import tomllib
from collections import Counter

import pytest

from .corpus_states import CORPUS, Entry, Outcome, alternatives, manifest

ENTRIES = manifest()
IDS = [e.name for e in ENTRIES]
BROKEN = [e for e in ENTRIES if not e.sound]
WITH_ALTERNATIVES = [e for e in ENTRIES if alternatives(e)]


def _entry_script(e: Entry) -> str:
    return (e.path / ("tests/test.sh" if e.layout == "harbor" else "run-tests.sh")).read_text()


def test_manifest_lists_exactly_the_task_directories():
    dirs = sorted(p.name for p in CORPUS.iterdir() if p.is_dir())
    assert dirs == IDS


def test_corpus_has_40_broken_verifiers_in_10_classes_and_6_sound_ones():
    classes = Counter(e.cls for e in BROKEN)
    assert len(BROKEN) >= 40 and len(classes) >= 10
    assert sum(e.sound for e in ENTRIES) >= 6
    assert {e.layout for e in ENTRIES} == {"harbor", "tb1"}
    assert {e.runtime for e in ENTRIES} <= {"envfactory", "harbor-only"}


@pytest.mark.parametrize("entry", ENTRIES, ids=IDS)
def test_task_directory_is_named_for_its_class_and_has_an_exploit(entry: Entry):
    assert entry.name.startswith(f"{entry.cls}--")
    assert (entry.path / "exploit.sh").is_file()
    if entry.layout == "harbor":
        assert (
            tomllib.loads((entry.path / "task.toml").read_text())["envfactory"]["name"]
            == entry.name
        )


@pytest.mark.parametrize("entry", BROKEN, ids=[e.name for e in BROKEN])
def test_every_broken_verifier_says_why_in_its_header(entry: Entry):
    header = _entry_script(entry).splitlines()[:3]
    assert any(line.startswith("# why: ") and len(line) > 20 for line in header)


def _outcome(outcomes: dict[str, Outcome | BaseException], entry: Entry) -> Outcome:
    got = outcomes[entry.name]
    if isinstance(got, BaseException):
        raise AssertionError(f"{entry.name}: checking its states failed: {got}") from got
    return got


@pytest.mark.docker
@pytest.mark.slow
@pytest.mark.parametrize("entry", ENTRIES, ids=IDS)
def test_reference_solution_earns_reward_1(corpus_outcomes, entry: Entry):  # type: ignore[no-untyped-def]
    out = _outcome(corpus_outcomes, entry)
    assert out.reference == 1, out.evidence["reference"]


@pytest.mark.docker
@pytest.mark.slow
@pytest.mark.parametrize("entry", ENTRIES, ids=IDS)
def test_untouched_environment_earns_0_unless_accepting_it_is_the_bug(
    corpus_outcomes, entry: Entry
):  # type: ignore[no-untyped-def]
    out = _outcome(corpus_outcomes, entry)
    assert out.untouched == int(entry.cls == "accepts-noop"), out.evidence["untouched"]


@pytest.mark.docker
@pytest.mark.slow
@pytest.mark.parametrize("entry", ENTRIES, ids=IDS)
def test_exploit_earns_1_from_a_broken_verifier_and_0_from_a_sound_one(
    corpus_outcomes, entry: Entry
):  # type: ignore[no-untyped-def]
    out = _outcome(corpus_outcomes, entry)
    if entry.sound:
        assert out.exploit == 0, out.evidence["exploit"]
    elif entry.runtime == "harbor-only":
        assert out.exploit_harbor == 1, out.evidence["exploit-harbor"]
        assert out.exploit == 0, "exploitable under envfactory's runtime too: mark it 'envfactory'"
    else:
        assert out.exploit == 1, out.evidence["exploit"]


@pytest.mark.docker
@pytest.mark.slow
@pytest.mark.parametrize("entry", WITH_ALTERNATIVES, ids=[e.name for e in WITH_ALTERNATIVES])
def test_every_alternative_correct_solution_earns_reward_1(corpus_outcomes, entry: Entry):  # type: ignore[no-untyped-def]
    out = _outcome(corpus_outcomes, entry)
    assert sorted(out.alternatives) == [a.stem for a in alternatives(entry)]
    for name, got in out.alternatives.items():
        assert got == 1, out.evidence[f"alternative {name}"]
