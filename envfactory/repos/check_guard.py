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
#: builtins a test may replace for its own run (mocks); every other builtin is the
#: runner's and the guard's too (pytest's code the hook reads an item through calls them)
TEST_BUILTINS = frozenset({"open", "print", "input", "help", "exit", "quit", "_"})
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


#: types of values that are data whatever they hold (a new class attribute of one of these
#: is state, such as a warning's "shown" flag, never behaviour)
PLAIN_TYPES = (bool, int, float, str, bytes, tuple, list, dict, set, frozenset, type(None))
#: audit events that change paths: which take two paths, and where their directory
#: descriptor argument is (a path relative to it is not relative to the working directory)
TWO_PATHS = frozenset({"os.rename", "os.replace", "os.link", "os.symlink"})
DIR_FD_ARG = {"os.rename": 2, "os.replace": 2, "os.link": 2, "os.symlink": 2,
              "os.remove": 1, "os.rmdir": 1, "os.chmod": 2, "shutil.rmtree": 1}  # fmt: skip
#: the tests' process ends with this status when the hook refuses an operation
REFUSED_STATUS = 70


def arm(key_fd: int, records_fd: int) -> types.ModuleType:
    """Read the run's key and configuration from `key_fd` (then closed), install the
    audit hook, and return the pytest plugin that reports each test's outcome.

    The hook and everything it calls come from a private copy of this file, executed in
    a namespace of its own with a copy of the builtins taken now: this module, which the
    plugin's functions lead to (their ``__globals__``), holds none of it."""
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
    private: dict[str, Any] = {
        "__builtins__": dict(vars(builtins)),
        "__name__": "guard_core",
        "__file__": __file__,
    }
    with open(__file__, encoding="utf-8") as f:
        exec(compile(f.read(), __file__, "exec"), private)
    state = private["_State"](bytes.fromhex(key.decode()), records_fd, cfg)
    plugin = _plugin()
    state.wrapper_codes = frozenset(
        getattr(plugin, n).__code__ for n in ("pytest_runtest_setup", "pytest_runtest_call",
                                              "pytest_runtest_teardown")
    )  # fmt: skip
    sys.addaudithook(state.hook)
    return plugin


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
    """Everything the audit hook holds. Only the interpreter's list of audit hooks refers
    to it (Python has no way to read that list), and it lives in the private copy of this
    file (`arm`). Its rules, because the solver's code can read the locals of any frame
    on the stack below its own (``f_back``) or in a traceback (``tb_frame``):

    - it never raises: a refused operation ends the process (`REFUSED_STATUS`), after a
      signed tamper record, since an exception leaving the hook would carry its frames;
    - it never calls code the solver could have replaced or defined: only C functions
      captured at arming, methods of exact builtin types, and attributes read with
      ``object.__getattribute__`` from objects whose exact type it checked first."""

    def __init__(self, key: bytes, records_fd: int, cfg: dict[str, Any]) -> None:
        import hashlib

        self.sha256 = hashlib.sha256  # a C constructor: calling it looks nothing up
        self.write = os.write
        self.exit = os._exit
        self.getcwd = os.getcwd
        self.readlink = os.readlink
        self.getframe = sys._getframe
        self.attr = object.__getattribute__
        self.builtins_dict = vars(builtins)
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
        self.builtins = {n: v for n, v in self.builtins_dict.items() if n not in TEST_BUILTINS}
        self.item_types = _item_types()
        self.skip_types = _skip_types()
        self.result_type = _result_type()
        self.impl_type = _impl_type()
        self.function_types = (types.FunctionType, types.MethodType)
        self.runner_hooks = _runner_hooks()
        self.multicall = _multicall_codes("_multicall")
        self.multicall_helpers = _multicall_codes("run_old_style_hookwrapper")
        self.wrapper_codes: frozenset[types.CodeType] = frozenset()
        self.phases: dict[tuple[int, str], str] = {}
        self.seq = 0
        self.tampered: str | None = None
        self.busy = False

    # -- the hook -------------------------------------------------------------------

    def hook(self, event: str, args: tuple[Any, ...]) -> None:
        if self.busy:  # events the hook's own reads raise (frames, code objects)
            return
        self.busy = True
        try:
            refused = self._event(event, args)
        except BaseException:  # a fault of the guard's: nothing may leave the hook
            refused = "the guard failed on " + event
        self.busy = False
        if refused:
            self._tamper(refused)
            self.exit(REFUSED_STATUS)

    def _event(self, event: str, args: tuple[Any, ...]) -> str | None:
        if event == EVENT:
            self._phase(args[0], args[1], args[2])
        elif event in REFUSED_EVENTS or event.startswith("ctypes."):
            return "refused: " + event
        elif event == "import":
            name = args[0]
            if type(name) is not str or name.split(".")[0] in REFUSED_MODULES:
                return "refused: an import of ctypes or cffi"
        elif event == "open":
            return self._open(args[0], args[1], args[2])
        elif event in ("os.rename", "os.replace", "os.link", "os.symlink", "os.remove",
                       "os.rmdir", "os.truncate", "os.chmod", "shutil.rmtree"):  # fmt: skip
            return self._change(event, args)
        elif event in ("compile", "code.__new__"):
            return self._compile(args[1])
        return None

    def _text(self, path: Any) -> str | None:
        """`path` as text, when it is exactly a str or bytes (anything else is not read:
        converting it would run its own code)."""
        if type(path) is str:
            return path
        if type(path) is bytes:
            return path.decode("utf-8", "surrogateescape")
        return None

    def _dir_fd(self, event: str, args: tuple[Any, ...], i: int) -> Any:
        """The directory descriptor the `i`-th path of `event` is relative to (None: the
        working directory)."""
        at = DIR_FD_ARG.get(event)
        if at is None:
            return None
        at = at + i if event in TWO_PATHS and event != "os.symlink" else at
        return args[at] if len(args) > at else None

    def _abs(self, text: str, dir_fd: Any = None) -> str:
        """`text` made absolute (from the working directory, or from `dir_fd`'s
        directory) and normalised, with string methods only."""
        if not text.startswith("/"):
            base = self.getcwd()
            if type(dir_fd) is int:
                try:
                    base = self.readlink("/proc/self/fd/" + str(dir_fd))
                except OSError:
                    base = "/nonexistent-directory"
            text = base + "/" + text
        parts: list[str] = []
        for part in text.split("/"):
            if part == "..":
                if parts:
                    parts.pop()
            elif part and part != ".":
                parts.append(part)
        return "/" + "/".join(parts)

    def _open(self, path: Any, mode: Any, flags: Any) -> str | None:
        if type(path) is int:
            return None
        text = self._text(path)
        if text is None:
            return "refused: open of a path given as an object"
        name = self._abs(text)
        if name.rsplit("/", 1)[-1] == "mem":
            return "refused: open " + name
        writing = (type(mode) is str and ("w" in mode or "a" in mode or "x" in mode or
                                          "+" in mode)) or (
            type(flags) is int and flags & WRITE_FLAGS != 0
        )  # fmt: skip
        if writing and self._guarded(name):
            return "refused: writing " + name
        return None

    def _change(self, event: str, args: tuple[Any, ...]) -> str | None:
        paths = args[:2] if event in TWO_PATHS else args[:1]
        for i, arg in enumerate(paths):
            if type(arg) is int or arg is None:
                continue
            text = self._text(arg)
            if text is None:
                return "refused: " + event + " of a path given as an object"
            name = self._abs(text, self._dir_fd(event, args, i))
            if "/proc/" in text or self._guarded(name, directories=True):
                return "refused: " + event + " " + name
        return None

    def _guarded(self, path: str, directories: bool = False) -> bool:
        """Whether `path` is a restored test file, a conftest or bytecode in the
        workspace, or the runner's own files (with `directories`: or a directory above a
        restored test file)."""
        if path in self.trusted or path.startswith(self.protected_dirs):
            return True
        if path.startswith(self.ws) and (path.endswith(".pyc") or path.endswith("/conftest.py")):
            return True
        if directories:
            prefix = path.rstrip("/") + "/"
            for t in self.trusted:
                if t.startswith(prefix):
                    return True
        return False

    def _compile(self, filename: Any) -> str | None:
        """Code compiled under the name of a restored test file or of the runner's own
        files is refused while the solver's code is on the stack: a test function or hook
        forged under such a name would pass the item checks."""
        name = self._text(filename)
        if name is None or (name not in self.trusted and not name.startswith(self.protected_dirs)):
            return None
        frame: types.FrameType | None = self.getframe(1)
        while frame is not None:
            if self._solver(frame.f_code.co_filename):
                return "refused: code compiled under the name " + name
            frame = frame.f_back
        return None

    def _solver(self, filename: Any) -> bool:
        if type(filename) is not str:
            return True
        return filename.startswith(self.ws) and filename not in self.trusted

    # -- outcomes -------------------------------------------------------------------

    def _phase(self, item: Any, phase: Any, outcome: Any) -> None:
        nodeid: Any
        if self.tampered is not None:
            return
        if type(phase) is not str or phase not in ("setup", "call", "teardown"):
            self._tamper("a phase that pytest does not run")
            return
        why = self._caller_problem(phase) or self._runner_problem()
        if why is None and type(outcome) is not self.result_type:
            why = "a phase reported with a forged result"
        if why is None and type(item) not in self.item_types:
            why = "an item of a type pytest does not make"
        nodeid = self.attr(item, "nodeid") if why is None else None  # pytest's property
        if why is None and type(nodeid) is not str:
            why = "an item whose node id is not text"
        if why is not None:
            self._tamper(why)
            return
        key = (id(item), phase)
        if key in self.phases:
            self._tamper(phase + " of " + nodeid + " reported twice")
            return
        bad = self._item_problem(item, nodeid)
        self.phases[key] = "failed" if bad else self._outcome(item, phase, outcome)
        if bad:
            self._record("note", bad)
        if phase == "teardown":
            self._send(item, nodeid)

    def _caller_problem(self, phase: str) -> str | None:
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
        impls: Any = caller.f_locals.get("hook_impls")
        if type(impls) not in (list, tuple):
            return "pluggy was called with hook implementations it did not make"
        functions = []
        for impl in impls:
            if type(impl) is not self.impl_type:
                return "pluggy was called with hook implementations it did not make"
            functions.append(self.attr(impl, "function"))
            if not self._runner_code(self._code_of(functions[-1])):
                return "a hook implementation from outside pytest"
        # the phase ran pytest's own runner (a call with the guard's wrapper alone would
        # "pass" any item)
        runner = self.runner_hooks.get("pytest_runtest_" + phase)
        if runner is None or not any(fn is runner for fn in functions):
            return "a phase ran without pytest's runner"
        return None

    def _code_of(self, fn: Any) -> types.CodeType | None:
        if type(fn) is types.MethodType:
            fn = fn.__func__
        return fn.__code__ if type(fn) is types.FunctionType else None

    def _runner_code(self, code: types.CodeType | None) -> bool:
        if code is None or type(code.co_filename) is not str:
            return False
        name = code.co_filename
        return name in self.trusted or name.startswith(self.protected_dirs) or name == __file__

    def _item_problem(self, item: Any, nodeid: str) -> str | None:
        for name in self.attr(item, "__dict__"):
            if type(name) is not str:
                return nodeid + ": an attribute that is not named by text"
            if self._method_of(type(item), name):
                return nodeid + ": " + name + " replaced on the item"
        code = self._code_of(self._unwrapped(self.attr(item, "obj")))  # pytest's property
        if (
            code is None
            or type(code.co_filename) is not str
            or code.co_filename not in self.trusted
        ):
            return nodeid + ": its test function is not from a restored test file"
        # the function is the one the node id names: its file, and its name
        if code.co_filename != self.ws + nodeid.split("::")[0]:
            return nodeid + ": its test function is from another file"
        if code.co_name != nodeid.split("[")[0].rsplit("::", 1)[-1]:
            return nodeid + ": its test function is " + code.co_name
        return None

    def _method_of(self, cls: type, name: str) -> bool:
        """Whether the closest definition of `name` in `cls`'s classes is callable."""
        for klass in cls.__mro__:
            found = vars(klass).get(name)
            if found is not None:
                return callable(found)
        return False

    def _unwrapped(self, fn: Any) -> Any:
        """The function under a test's decorators (`functools.wraps`' ``__wrapped__``)."""
        for _ in range(8):
            if type(fn) is types.MethodType:
                fn = fn.__func__
            if type(fn) is not types.FunctionType:
                return fn
            inner = fn.__dict__.get("__wrapped__")
            if inner is None:
                return fn
            fn = inner
        return fn

    def _runner_problem(self) -> str | None:
        for name, value in self.builtins.items():
            if self.builtins_dict.get(name) is not value:
                return "builtins." + name + " was replaced"
        return self._module_problem() or self._class_problem()

    def _module_problem(self) -> str | None:
        for name, mod in self.modules.items():
            now, then = vars(mod), self.module_dicts[name]
            for k in now:
                if type(k) is not str:
                    return name + " holds a global not named by text"
                if k not in then and k in self.builtins_dict:
                    return name + "." + k + " shadows the builtin"
            for k, v in then.items():
                new = now.get(k, then)
                if new is not v and _code(v) and not self._own_patch(name + "." + k, k, new):
                    return name + "." + k + " was replaced"
        return None

    def _class_problem(self) -> str | None:
        for cls, saved in self.classes.values():
            current = vars(cls)
            for k in current:
                if type(k) is not str:
                    return "a class of the runner holds an attribute not named by text"
            for k in set(current) | set(saved):
                new, old = current.get(k, current), saved.get(k, saved)
                if new is old or (old is not saved and not _code(old)):
                    continue
                if old is saved and type(new) in PLAIN_TYPES:  # a flag pytest keeps there
                    continue
                if not self._own_patch("", k, new):
                    return cls.__module__ + "." + cls.__qualname__ + "." + k + " was changed"
        return None

    def _own_patch(self, qualified: str, key: str, new: Any) -> bool:
        """Whether a runner attribute's new value is one pytest itself sets while it runs:
        a listed global, or a module-level function of pytest's own files (``legacypath``
        adds ``Session.startdir`` as a property of ``Session_stardir``). Never a method of
        another of pytest's classes: ``Function.runtest = Item.setup`` would pass any test."""
        if qualified in RUNTIME_GLOBALS:
            return True
        if type(new) is property:
            new = new.fget
        if type(new) is not types.FunctionType:
            return False
        code = new.__code__
        return (
            type(code.co_filename) is str
            and code.co_filename.startswith(self.protected_dirs)
            and type(new.__qualname__) is str
            and "." not in new.__qualname__
        )

    def _outcome(self, item: Any, phase: str, outcome: Any) -> str:
        errors = []
        try:
            errors.append(self.attr(outcome, "_exception"))
        except AttributeError:  # pluggy < 1.1 keeps (type, value, traceback)
            info = self.attr(outcome, "_excinfo")
            errors.append(info[1] if type(info) is tuple else None)
        errors = [e for e in errors if e is not None]
        xfail = None
        if phase == "call":
            for info in self.attr(item, "__dict__").get("_excinfo") or ():  # unittest's
                raw = self.attr(info, "_excinfo")
                errors.append(raw[1] if type(raw) is tuple else None)
            xfail = self._marker(item, "xfail")
        if not errors:  # an expected failure that passed fails when the marker is strict
            return "failed" if xfail is not None and xfail.get("strict") is True else "passed"
        if xfail is not None or all(issubclass(type(e), self.skip_types) for e in errors):
            return "skipped"  # as pytest's JUnit file lists an expected failure
        return "failed"

    def _marker(self, node: Any, name: str) -> dict[str, Any] | None:
        """The keyword arguments of the closest mark `name` on `node` or its parents,
        read from pytest's own lists (None: no such mark)."""
        for _ in range(64):
            if node is None:
                return None
            for mark in self.attr(node, "__dict__").get("own_markers") or ():
                if self.attr(mark, "name") == name:
                    kwargs = self.attr(mark, "kwargs")
                    return dict(kwargs) if type(kwargs) in (dict, types.MappingProxyType) else {}
            node = self.attr(node, "parent")
        return None

    def _send(self, item: Any, nodeid: str) -> None:
        got = [self.phases.get((id(item), p)) for p in ("setup", "call", "teardown")]
        if "failed" in got:
            outcome = "failed"
        elif "skipped" in got:
            outcome = "skipped"
        else:
            outcome = "passed" if None not in got else "failed"
        self._record(nodeid.encode("utf-8", "surrogateescape").hex(), outcome)

    def _record(self, name: str, outcome: str) -> None:
        self.seq += 1
        text = outcome.replace("\t", " ").replace("\n", " ")[:300]
        body = (str(self.seq) + "\t" + name + "\t" + text).encode()
        self.write(self.fd, body + b"\t" + self._mac(body).encode() + b"\n")

    def _mac(self, body: bytes) -> str:
        key = self.key.ljust(64, b"\0")
        inner = self.sha256(bytes(b ^ 0x36 for b in key) + body).digest()
        return self.sha256(bytes(b ^ 0x5C for b in key) + inner).hexdigest()

    def _tamper(self, why: str) -> None:
        if self.tampered is None:
            self.tampered = why
            self._record("tamper", why)


def _code(value: Any) -> bool:
    """Whether the runner's own `value` is behaviour (a function, class, method or
    descriptor) rather than data: what a forgery swaps. Class-level data pytest keeps as
    state changes freely. Only values of the runner's are asked (they run no solver code)."""
    return callable(value) or hasattr(type(value), "__get__")


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


def _runner_hooks() -> dict[str, Any]:
    """Hook name → pytest's own implementation that runs that phase of a test."""
    import _pytest.runner

    return {
        name: getattr(_pytest.runner, name)
        for name in ("pytest_runtest_setup", "pytest_runtest_call", "pytest_runtest_teardown")
    }


def _result_type() -> type:
    """pluggy's result class, wherever this pluggy version defines it."""
    return _pluggy_class(("Result", "_Result"), ("pluggy", "pluggy._result", "pluggy.callers"))


def _impl_type() -> type:
    """pluggy's hook implementation class, wherever this pluggy version defines it."""
    return _pluggy_class(("HookImpl",), ("pluggy", "pluggy._hooks", "pluggy.hooks"))


def _pluggy_class(names: tuple[str, ...], modules: tuple[str, ...]) -> type:
    import importlib

    for module in modules:
        try:
            mod = importlib.import_module(module)
        except ImportError:
            continue
        for name in names:
            found = getattr(mod, name, None)
            if isinstance(found, type):
                return found
    return type(None)  # unknown pluggy: nothing matches, the guard signs nothing


def _multicall_codes(function: str) -> frozenset[types.CodeType]:
    """The code of pluggy's `function`, wherever this pluggy version defines it."""
    codes = set()
    for name in ("pluggy._callers", "pluggy.callers"):
        mod = sys.modules.get(name)
        fn = getattr(mod, function, None)
        if fn is not None:
            codes.add(fn.__code__)
    return frozenset(codes)


def _plugin() -> types.ModuleType:
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

    plugin = types.ModuleType("envfactory_check_guard_plugin")
    for w in (pytest_runtest_setup, pytest_runtest_call, pytest_runtest_teardown):
        setattr(plugin, w.__name__, w)
    return plugin
