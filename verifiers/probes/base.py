"""What a shortcut probe is: a named, documented state transform that tries to earn reward
without doing the task.

A probe is a *class* of attack, not an example: it is written against what every task
has (an instruction, declared workspace paths, the usual tool locations), never against
one task's tests. Its class docstring names the attack class; `script` is POSIX shell run
as root in the sandbox holding the state to attack; it must succeed on any Debian-like
image and do nothing harmful to the host. A probe that finds nothing to change leaves the
state as it was (the gates then skip it as not applicable).
"""

from __future__ import annotations

import shlex
from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import ClassVar, Protocol

from envfactory.core.models import EnvironmentSpec, ExecResult
from sandboxes.protocol import Sandbox

#: Where verifiers and harnesses usually read or write rewards and results.
USUAL_RESULT_DIRS = ("/logs/verifier", "/logs", "/tmp", "/root", "/output", "/results")
#: Names under which a test runner's files usually go.
TEST_GLOBS = (
    "test_*.py",
    "*_test.py",
    "tests.py",
    "test.sh",
    "run-tests.sh",
    "run_tests.sh",
    "*.test.js",
    "*.spec.js",
    "*_test.go",
    "test_*.sh",
)


class Described(Protocol):
    """A file a probe plants, named with the tool that loads it (`tools.Load`)."""

    @property
    def path(self) -> str: ...

    def describe(self) -> str: ...


class Probe(ABC):
    """Base class; subclasses document their attack class in their docstring."""

    name: ClassVar[str]

    @property
    def doc(self) -> str:
        return (type(self).__doc__ or "").strip()

    @property
    def summary(self) -> str:
        """The docstring's first sentence, on one line (what a report's evidence quotes and
        the probe table in docs/verifiers.md shows)."""
        return first_sentence(self.doc)

    @property
    def detail(self) -> str:
        """What this instance plants and which tool would load it ("" when the summary says
        all): evidence names the path and the tool."""
        return ""

    @abstractmethod
    def script(self, spec: EnvironmentSpec) -> str:
        """The shell script that transforms the state."""

    def script_under(self, spec: EnvironmentSpec, semantics: str) -> str:
        """The attack as far as a verifier can defend against it under `semantics` (see
        `harness_limits`); the whole attack unless a subclass narrows it."""
        return self.script(spec)

    #: semantics → what this attack class can do there that no verifier can prevent (the
    #: harness's own limit); the probe's rows under that semantics leave that part out and
    #: the gate report carries the sentence as a note.
    harness_limits: ClassVar[dict[str, str]] = {}

    @property
    def touched(self) -> tuple[str, ...] | None:
        """The files this probe changes, where it knows them before it runs (the probes
        built from the oracle's outputs); None: unknown, so no trace can show the verifier
        never read them (`verifiers.gate.applicability`)."""
        return None

    @property
    def unread_finding(self) -> str | None:
        """What it means when the traced verification of the oracle never read what this
        probe changed: None, the row cannot judge the verifier (*not applicable*); or a
        finding's sentence, when what it never read is itself part of what the task asks
        for (a program the instruction names): the row's failure then stands, with it."""
        return None

    #: What this probe knows that a solver does not (None: nothing a solver lacks), e.g.
    #: "the verifier's own file names, read from its trace". A row of such a probe says so,
    #: and a report whose every rejection rests on such rows says that too
    #: (`GateReport.privileged_only`): "a solver who knew the tests could", not "a solver can".
    privileged: ClassVar[str | None] = None

    #: The file this probe's planted code writes, in the verification container, when the
    #: probe's premise held during that verification (a wrapper refused an input, a payload
    #: was loaded); None: the probe's premise needs no run-time check. A row whose every
    #: verification left the file absent is *not applicable* (`premise_unmet` says why):
    #: its state behaved as the reference's, so a 1 proves nothing against the verifier.
    premise_file: ClassVar[str | None] = None
    #: why a row is not applicable when no verification wrote `premise_file`
    premise_unmet: ClassVar[str] = ""

    #: applied to the no-op state only: the attack does not depend on how far the work got,
    #: and each of its rows is slow (it waits out the verifier's own timeouts)
    noop_only: ClassVar[bool] = False

    def apply(self, sandbox: Sandbox, spec: EnvironmentSpec) -> ExecResult:
        return sandbox.exec(["/bin/sh", "-c", self.script(spec)], timeout=120, user="root")


#: where planted code records that a probe's premise held (`Probe.premise_file`): /tmp is
#: writable by whichever user the verifier runs the planted program as
PREMISE_DIR = "/tmp/.envfactory-premise"


def premise_path(name: str) -> str:
    """The premise file of the probe `name`."""
    return f"{PREMISE_DIR}-{name}"


def first_sentence(doc: str) -> str:
    """`doc`'s first sentence, its whitespace folded to single spaces."""
    text = " ".join(doc.split())
    end = text.find(". ")
    return text if end < 0 else text[: end + 1]


def q(s: str) -> str:
    return shlex.quote(s)


def qs(items: Sequence[str]) -> str:
    return " ".join(shlex.quote(i) for i in items)


def find_tests_expr() -> str:
    """A `find` predicate (parenthesised) matching test-like file names."""
    return "\\( " + " -o ".join(f"-name {q(g)}" for g in TEST_GLOBS) + " \\)"


def test_roots(spec: EnvironmentSpec) -> list[str]:
    """Where tests the solver can reach usually live: the workspace and /tests."""
    return [*spec.workspace_paths, "/tests"]
