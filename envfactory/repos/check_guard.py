"""The guard check.py loads into its pytest process before any of the solver's code (stdlib
only; copied into a mined task's tests/ as check_guard.py).

check.py (the outer process) never imports the solver's code; it starts pytest in a child
process whose tests import it, and trusts only what this guard sends it: one record per
test, `node id, outcome`, signed with a key the outer process drew for this run. The
child's exit status, its output and any JUnit file are never read.

How the guard keeps the solver's code, which runs in the same interpreter, from forging
those records (docs/repositories.md, "Verdicts the code under test cannot forge"):

- the key is read from an inherited file descriptor that is closed before pytest starts,
  and is then held only in the closure of an audit hook (`sys.addaudithook`): Python has
  no way to list audit hooks, and the paths to a closure without one (`gc`, `ctypes`,
  `/proc/self/mem`, tracing) are refused by the hook itself;
- the outcome of a test is what the guard's own hook wrappers saw each phase (setup,
  call, teardown) raise, taken from pluggy's result before any report is made — test
  reports, `pytest_runtest_makereport`, the JUnit writer and the exit status are not
  consulted, so rewriting them changes nothing;
- before a record is signed, the hook checks that it was asked by the guard's wrapper,
  resumed by pluggy's own `_multicall` with hook implementations from pytest, pluggy or
  the restored test files only; that the item is one of pytest's own item types whose
  test function comes from a restored test file and has no method replaced on the
  instance; and that no class or module attribute of pytest, pluggy and unittest (and
  no builtin the runner relies on) changed since the guard was armed. Any difference
  turns the whole run into tamper evidence: nothing more is signed.

What an in-process adversary can still do is listed in the docs: above all, make the
tests' own comparisons succeed (objects whose ``__eq__`` is always true, patched helpers
the tests call).
"""

from __future__ import annotations

import builtins
import os
import sys
import types
from collections.abc import Generator
from typing import Any

EVENT = "envfactory.check.phase"
#: modules whose classes and globals decide a test's outcome
PROTECTED_PREFIXES = ("_pytest", "pytest", "pluggy", "unittest")
#: builtins the runner's outcome path relies on (others may be patched by tests themselves)
PROTECTED_BUILTINS = (
    "isinstance", "issubclass", "type", "getattr", "setattr", "hasattr", "id", "len",
    "iter", "next", "BaseException", "Exception", "AssertionError", "StopIteration",
    "SystemExit", "KeyboardInterrupt", "super", "object", "callable",
)  # fmt: skip
#: audit events refused once the guard is armed: introspection that reaches any object
#: (the guard's closures included), foreign memory access, tracers that see every frame
REFUSED_EVENTS = ("gc.get_objects", "gc.get_referrers", "gc.get_referents",
                  "sys.settrace", "sys.setprofile", "sys._current_frames")  # fmt: skip
#: module globals pytest itself sets while it runs (the assertion plugin's hooks: they only
#: format the message of an assertion that already failed, or report one that passed)
RUNTIME_GLOBALS = frozenset({
    "_pytest.assertion.util._reprcompare", "_pytest.assertion.util._assertion_pass",
    "_pytest.assertion.util._config", "_pytest.assertion.rewrite._config",
})  # fmt: skip
REFUSED_MODULES = ("ctypes", "_ctypes", "cffi", "_cffi_backend")
WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND


class Tamper(PermissionError):
    """Raised by the audit hook to refuse an operation the guard forbids."""


def arm(key_fd: int, records_fd: int) -> types.ModuleType:
    """Read the run's key and configuration from `key_fd` (then closed), install the
    audit hook, and return the pytest plugin that reports each test's outcome."""
    import json

    raw = b""
    while True:
        chunk = os.read(key_fd, 1 << 16)
        if not chunk:
            break
        raw += chunk
    os.close(key_fd)
    key, _, body = raw.partition(b"\n")
    cfg = json.loads(body.decode())
    _import_runner_modules()
    _nondumpable()
    state = _State(bytes.fromhex(key.decode()), records_fd, cfg)
    sys.addaudithook(state.hook)
    return _plugin(state)


def _import_runner_modules() -> None:
    """Every pytest built-in plugin, pluggy and unittest, imported before the solver's
    code can run, so that their classes and globals are what the snapshot holds."""
    import importlib
    import unittest  # noqa: F401
    import unittest.case  # noqa: F401
    import unittest.result  # noqa: F401

    import _pytest.config
    import pluggy  # noqa: F401

    for name in getattr(_pytest.config, "default_plugins", ()):
        try:
            importlib.import_module("_pytest." + name)
        except ImportError:
            pass
    for name in ("_pytest.runner", "_pytest.python", "_pytest.main", "_pytest.reports",
                 "_pytest.unittest", "_pytest.outcomes", "_pytest.nodes"):  # fmt: skip
        importlib.import_module(name)


def _nondumpable() -> None:
    """prctl(PR_SET_DUMPABLE, 0): other processes of the same user (a child the solver's
    code starts) cannot read this process's memory through /proc. Best effort: without
    ctypes the process stays dumpable."""
    try:
        import ctypes

        ctypes.CDLL(None).prctl(4, 0, 0, 0, 0)
    except (ImportError, OSError, AttributeError):
        pass


def _protected_modules() -> dict[str, types.ModuleType]:
    return {
        name: mod
        for name, mod in list(sys.modules.items())
        if mod is not None and name.split(".")[0] in PROTECTED_PREFIXES
    }


def _class_snapshot(modules: dict[str, types.ModuleType]) -> dict[int, tuple[type, dict[str, Any]]]:
    out = {}
    for mod in modules.values():
        for value in list(vars(mod).values()):
            if isinstance(value, type) and getattr(value, "__module__", "").split(".")[0] in (
                PROTECTED_PREFIXES
            ):
                out[id(value)] = (value, dict(vars(value)))
    return out


class _State:
    """Everything the audit hook holds. The hook is the only holder of this object: no
    Python code can list audit hooks."""

    def __init__(self, key: bytes, records_fd: int, cfg: dict[str, Any]) -> None:
        import hashlib

        self.sha256 = hashlib.sha256  # a C constructor: calling it looks nothing up
        self.write = os.write
        self.getframe = sys._getframe
        self.abspath = os.path.abspath
        self.key = key
        self.fd = records_fd
        self.ws = cfg["workspace"].rstrip("/") + "/"
        self.trusted = frozenset(cfg["trusted"])
        self.protected_dirs = tuple(
            os.path.dirname(m.__file__ or "/") + "/"
            for m in (sys.modules["_pytest"], sys.modules["pluggy"], sys.modules["unittest"])
        )
        self.modules = _protected_modules()
        self.module_dicts = {n: dict(vars(m)) for n, m in self.modules.items()}
        self.classes = _class_snapshot(self.modules)
        self.builtins = {n: getattr(builtins, n) for n in PROTECTED_BUILTINS}
        self.item_types = _item_types()
        self.skip_types = _skip_types()
        self.multicall = _multicall_codes("_multicall")
        self.multicall_helpers = _multicall_codes("run_old_style_hookwrapper")
        self.wrapper_codes: frozenset[types.CodeType] = frozenset()
        self.phases: dict[tuple[int, str], str] = {}
        self.seq = 0
        self.tampered: str | None = None
        self.busy = False

    # -- the hook -------------------------------------------------------------------

    def hook(self, event: str, args: tuple[Any, ...]) -> None:
        if self.busy:
            return
        self.busy = True
        try:
            self._event(event, args)
        finally:
            self.busy = False

    def _event(self, event: str, args: tuple[Any, ...]) -> None:
        if event == EVENT:
            self._phase(*args)
        elif event in REFUSED_EVENTS or event.startswith("ctypes."):
            raise Tamper(f"refused during verification: {event}")
        elif event == "import" and args[0].split(".")[0] in REFUSED_MODULES:
            raise Tamper(f"refused during verification: import {args[0]}")
        elif event == "open":
            self._open(args[0], args[1], args[2])
        elif event in ("os.rename", "os.replace", "os.link", "os.symlink", "os.remove",
                       "os.rmdir", "os.truncate", "os.chmod", "shutil.rmtree"):  # fmt: skip
            self._change(event, args)
        elif event in ("compile", "code.__new__"):
            self._compile(args[1])

    def _open(self, path: Any, mode: Any, flags: Any) -> None:
        if isinstance(path, int):
            return
        text = os.fsdecode(path)
        if os.path.basename(text) == "mem" or text.endswith("/mem"):
            raise Tamper(f"refused during verification: open {text}")
        writing = (isinstance(mode, str) and any(c in mode for c in "wax+")) or (
            isinstance(flags, int) and flags & WRITE_FLAGS
        )
        if writing and self._guarded(text):
            raise Tamper(f"refused during verification: writing {text}")

    def _change(self, event: str, args: tuple[Any, ...]) -> None:
        for arg in args[:2]:
            if isinstance(arg, (str, bytes)):
                text = os.fsdecode(arg)
                if "/proc/" in text or self._guarded(text, directories=True):
                    raise Tamper(f"refused during verification: {event} {text}")

    def _guarded(self, text: str, directories: bool = False) -> bool:
        """Whether `text` names a restored test file, a conftest, bytecode, or the
        runner's own files (with `directories`: or a directory above a test file)."""
        path = self.abspath(text)
        if path in self.trusted or path.endswith((".pyc", "/conftest.py")):
            return True
        if path.startswith(self.protected_dirs):
            return True
        if directories:
            prefix = path.rstrip("/") + "/"
            return any(t.startswith(prefix) for t in self.trusted)
        return False

    def _compile(self, filename: Any) -> None:
        """Code compiled under the name of a restored test file or of the runner's own
        files is refused while the solver's code is on the stack: a test function or hook
        forged under such a name would pass the item checks."""
        if not isinstance(filename, (str, bytes)):
            return
        name = os.fsdecode(filename)
        if name not in self.trusted and not name.startswith(self.protected_dirs):
            return
        frame: types.FrameType | None = self.getframe(1)
        while frame is not None:
            if self._solver(frame.f_code.co_filename):
                raise Tamper(f"refused during verification: code named {name}")
            frame = frame.f_back

    def _solver(self, filename: str) -> bool:
        return filename.startswith(self.ws) and filename not in self.trusted

    # -- outcomes -------------------------------------------------------------------

    def _phase(self, item: Any, phase: str, outcome: Any) -> None:
        if self.tampered is not None:
            return
        why = self._caller_problem() or self._runner_problem()
        if why:
            self._tamper(why)
            return
        key = (id(item), phase)
        if key in self.phases:
            self._tamper(f"{phase} of {item.nodeid} reported twice")
            return
        bad = self._item_problem(item)
        self.phases[key] = "failed" if bad else self._outcome(item, phase, outcome)
        if bad:
            self._record("note", bad)
        if phase == "teardown":
            self._send(item)

    def _caller_problem(self) -> str | None:
        frame = self.getframe(4)  # ← _phase ← _event ← hook ← the sys.audit caller
        if frame.f_code not in self.wrapper_codes:
            return "a phase was reported by code other than the guard's wrapper"
        caller = frame.f_back
        if not self.multicall:
            return None
        # pluggy resumes an old-style wrapper from _multicall, or (pluggy >= 1.5) from a
        # generator of its own that _multicall drives
        if caller is not None and caller.f_code in self.multicall_helpers:
            caller = caller.f_back
        if caller is None or caller.f_code not in self.multicall:
            return "the guard's wrapper was not resumed by pluggy"
        for impl in caller.f_locals.get("hook_impls", ()):
            fn = getattr(impl, "function", None)
            code = getattr(fn, "__code__", None)
            if code is None or not self._runner_code(code.co_filename):
                return f"a hook implementation from outside pytest: {impl!r}"
        return None

    def _runner_code(self, filename: str) -> bool:
        return (
            filename in self.trusted
            or filename.startswith(self.protected_dirs)
            or (filename == __file__)
        )

    def _item_problem(self, item: Any) -> str | None:
        if type(item) not in self.item_types:
            return f"an item of type {type(item)!r}"
        for name in vars(item):
            if callable(getattr(type(item), name, None)):
                return f"{item.nodeid}: {name} replaced on the item"
        fn = getattr(item, "obj", None)
        fn = getattr(fn, "__func__", fn)
        for _ in range(8):  # decorators (functools.wraps) down to the test function
            inner = getattr(fn, "__wrapped__", None)
            if inner is None:
                break
            fn = inner
        code = getattr(fn, "__code__", None)
        if code is None or code.co_filename not in self.trusted:
            return f"{item.nodeid}: its test function is not from a restored test file"
        return None

    def _runner_problem(self) -> str | None:
        for name, mod in self.modules.items():
            now, then = vars(mod), self.module_dicts[name]
            for k, v in then.items():
                new = now.get(k, then)
                if new is not v and _code(v, new) and not self._own_patch(f"{name}.{k}", k, new):
                    return f"{name}.{k} was replaced"
            shadows = [k for k in set(now) - set(then) if hasattr(builtins, k)]
            if shadows:  # a new global named like a builtin changes what the code calls
                return f"{name}.{shadows[0]} shadows the builtin"
        for cls, saved in self.classes.values():
            current = vars(cls)
            for k in set(current) | set(saved):
                new, old = current.get(k, current), saved.get(k, saved)
                if new is not old and _code(old, new) and not self._own_patch("", k, new):
                    return f"{cls.__module__}.{cls.__qualname__}.{k} was changed"
        for name, value in self.builtins.items():
            if getattr(builtins, name, None) is not value:
                return f"builtins.{name} was replaced"
        return None

    def _own_patch(self, qualified: str, key: str, new: Any) -> bool:
        """Whether a runner attribute's new value is one pytest itself sets while it runs:
        a listed global, or a function of pytest's own files named for the attribute
        (``legacypath`` patches ``Config._getini_unknown_type`` with
        ``Config__getini_unknown_type``)."""
        if qualified in RUNTIME_GLOBALS:
            return True
        fn = getattr(new, "fget", new)
        code = getattr(getattr(fn, "__func__", fn), "__code__", None)
        return (
            code is not None
            and code.co_filename.startswith(self.protected_dirs)
            and code.co_name.endswith(key)
            and code.co_name != key  # not one of pytest's other methods of the same name
        )

    def _outcome(self, item: Any, phase: str, outcome: Any) -> str:
        exc = outcome.excinfo
        errors = [exc[1]] if exc is not None else []
        if phase == "call":
            errors += [e.value for e in (item.__dict__.get("_excinfo") or ())]
        if not errors:
            return "passed"
        if all(isinstance(e, self.skip_types) for e in errors):
            return "skipped"
        return "failed"

    def _send(self, item: Any) -> None:
        got = [self.phases.get((id(item), p)) for p in ("setup", "call", "teardown")]
        if "failed" in got:
            outcome = "failed"
        elif "skipped" in got:
            outcome = "skipped"
        else:
            outcome = "passed" if None not in got else "failed"
        self._record(item.nodeid.encode("utf-8", "surrogateescape").hex(), outcome)

    def _record(self, name: str, outcome: str) -> None:
        self.seq += 1
        text = outcome.replace("\t", " ").replace("\n", " ")[:300]
        body = f"{self.seq}\t{name}\t{text}".encode()
        self.write(self.fd, body + b"\t" + self._mac(body).encode() + b"\n")

    def _mac(self, body: bytes) -> str:
        key = self.key.ljust(64, b"\0")
        inner = self.sha256(bytes(b ^ 0x36 for b in key) + body).digest()
        return self.sha256(bytes(b ^ 0x5C for b in key) + inner).hexdigest()

    def _tamper(self, why: str) -> None:
        self.tampered = why
        self._record("tamper", why)


def _code(*values: Any) -> bool:
    """Whether any of `values` is behaviour (a function, class, method or descriptor) rather
    than data: what a forgery swaps. Class-level data pytest keeps as state changes freely."""
    return any(callable(v) or hasattr(v, "__get__") for v in values)


def _item_types() -> frozenset[type]:
    import _pytest.python

    types = {_pytest.python.Function}
    try:
        import _pytest.unittest

        types.add(_pytest.unittest.TestCaseFunction)
    except ImportError:
        pass
    return frozenset(types)


def _skip_types() -> tuple[type[BaseException], ...]:
    import _pytest.outcomes

    found: list[type[BaseException]] = [_pytest.outcomes.Skipped]
    xfailed = getattr(_pytest.outcomes, "XFailed", None)
    if xfailed is not None:
        found.append(xfailed)
    import unittest

    found.append(unittest.SkipTest)
    return tuple(found)


def _multicall_codes(function: str) -> frozenset[types.CodeType]:
    """The code of pluggy's `function`, wherever this pluggy version defines it."""
    codes = set()
    for name in ("pluggy._callers", "pluggy.callers"):
        mod = sys.modules.get(name)
        fn = getattr(mod, function, None)
        if fn is not None:
            codes.add(fn.__code__)
    return frozenset(codes)


def _plugin(state: _State) -> types.ModuleType:
    """The plugin object: three outermost hook wrappers that report each phase's outcome
    to the audit hook (`EVENT`), which alone signs and sends it."""
    import pytest

    audit = sys.audit

    @pytest.hookimpl(hookwrapper=True, tryfirst=True)
    def pytest_runtest_setup(item: Any) -> Generator[None, Any, None]:
        outcome = yield
        audit(EVENT, item, "setup", outcome)

    @pytest.hookimpl(hookwrapper=True, tryfirst=True)
    def pytest_runtest_call(item: Any) -> Generator[None, Any, None]:
        outcome = yield
        audit(EVENT, item, "call", outcome)

    @pytest.hookimpl(hookwrapper=True, tryfirst=True)
    def pytest_runtest_teardown(item: Any) -> Generator[None, Any, None]:
        outcome = yield
        audit(EVENT, item, "teardown", outcome)

    wrappers = (pytest_runtest_setup, pytest_runtest_call, pytest_runtest_teardown)
    state.wrapper_codes = frozenset(w.__code__ for w in wrappers)
    plugin = types.ModuleType("envfactory_check_guard_plugin")
    for w in wrappers:
        setattr(plugin, w.__name__, w)
    return plugin
