"""The envfactory error tree.

    EnvFactoryError
    ├── InvalidInput            bad user input; terminal (never retried)
    │   ├── InvalidSeed         a seed file or directory is wrong (names the field/file)
    │   ├── InvalidTask         an imported task directory is wrong
    │   ├── InvalidRepository   a repository to mine cannot be cloned, is malformed or too large
    │   └── InvalidPack         a pack archive is unsafe or tampered
    ├── ConfigError             settings missing or inconsistent; terminal
    ├── NotFound                an id that is not in the store
    ├── Conflict                a concurrent change won (e.g. a review decided twice)
    ├── PublishBlocked          guard() refused to publish; carries every reason
    ├── StoreError              database or artifact store failure
    ├── SandboxError            Docker failure (retryable unless subclassed terminal)
    │   ├── ImageBuildFailed    an environment image did not build (terminal; its log's tail)
    │   ├── SandboxFileNotFound a path asked for does not exist in the sandbox (terminal)
    │   └── SandboxBroken       the sandbox can no longer run commands (`reason` says why)
    ├── AgentError              LLM endpoint or agent loop failure
    │   ├── AgentRetryable      429 / 5xx / timeout — retry with backoff
    │   └── BudgetExhausted     turn / token / wall-time budget spent (terminal)
    └── TrainerError            trainer failure (a rollout worker crashed, a checkpoint is bad)
        ├── TrainerConfigError  a trainer option, model path or task name is wrong; terminal
        ├── RolloutError        a rollout worker (thread or process) crashed or died
        └── RolloutEngineError  the rollout engine (an SGLang server) refused or failed a
                                request; retryable

A failed gate, a shortcut finding or a broken environment is a *result*, not an
exception. `retryable` tells the activity layer how to translate an error.
"""

from __future__ import annotations

from typing import Literal, NoReturn

#: why a sandbox can no longer run commands (`SandboxBroken.reason`)
BrokenReason = Literal["pids_exhausted", "runtime_error", "container_dead", "disk_exceeded"]


class EnvFactoryError(Exception):
    """Base of every error we raise on purpose."""

    retryable: bool = False

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        return f"{self.message}\n  hint: {self.hint}" if self.hint else self.message


class InvalidInput(EnvFactoryError):
    """User input is wrong; retrying cannot help."""


class InvalidSeed(InvalidInput):
    """A seed file or directory is wrong. `where` names the field or file."""

    def __init__(self, where: str, problem: str, *, hint: str | None = None) -> None:
        super().__init__(f"{where}: {problem}", hint=hint)
        self.where = where
        self.problem = problem


class InvalidTask(InvalidInput):
    """An imported task directory is wrong (missing file, unknown layout)."""


class InvalidRepository(InvalidInput):
    """A repository to mine is unreachable, not a git repository, malformed or too large;
    nothing of it is stored."""


class InvalidPack(InvalidInput):
    """A pack is unsafe (traversal, symlink, bomb) or a member's hash does not match."""


class ConfigError(EnvFactoryError):
    """Settings are missing or inconsistent."""


class NotFound(EnvFactoryError):
    """An id that is not in the store."""


class Conflict(EnvFactoryError):
    """Someone else changed the object first (e.g. a review item already decided)."""


class PublishBlocked(EnvFactoryError):
    """guard() found problems; all of them are listed in `reasons`."""

    def __init__(self, reasons: list[str]) -> None:
        super().__init__("publish refused: " + "; ".join(reasons))
        self.reasons = list(reasons)


class StoreError(EnvFactoryError):
    """Database or artifact-store failure."""

    retryable = True


class SandboxError(EnvFactoryError):
    """Docker engine failure; usually transient."""

    retryable = True


class ImageBuildFailed(SandboxError):
    """An environment image failed to build; the build log says why. `log` is the log's
    last MiB at most, opened by a note of what was dropped (`sandboxes.log_tail`)."""

    retryable = False

    def __init__(self, message: str, *, hint: str | None = None, log: str = "") -> None:
        super().__init__(message, hint=hint)
        self.log = log


class SandboxFileNotFound(SandboxError, FileNotFoundError):
    """A path read from a sandbox does not exist there."""

    retryable = False


class SandboxBroken(SandboxError):
    """The sandbox cannot run commands any more: its pids limit is exhausted, the container
    runtime refused to start the command (`detail` holds the runtime's words), the
    container is dead, or it was stopped past its disk quota. Not an exit status: callers
    never turn it into a reward. Retryable in a fresh sandbox, except `disk_exceeded`,
    which the sandbox's own commands caused."""

    def __init__(
        self, message: str, *, reason: BrokenReason, detail: str = "", hint: str | None = None
    ) -> None:
        super().__init__(message, hint=hint)
        self.reason: BrokenReason = reason
        self.detail = detail
        self.retryable = reason != "disk_exceeded"


class AgentError(EnvFactoryError):
    """LLM endpoint or agent-loop failure."""


class AgentRetryable(AgentError):
    """Rate limit, 5xx, timeout or connection error."""

    retryable = True


class BudgetExhausted(AgentError):
    """A turn, token or wall-time budget is spent."""


class TrainerError(EnvFactoryError):
    """Trainer failure: a rollout worker crashed, a checkpoint cannot be read."""


class TrainerConfigError(TrainerError):
    """A trainer option, model path, task name or freeze pattern is wrong."""


class RolloutError(TrainerError):
    """A rollout worker (thread or process) crashed or died; the cause is in the message."""


class RolloutEngineError(TrainerError):
    """The rollout engine refused or failed a request (server down, bad weights)."""

    retryable = True


def raise_as(error: BaseException, cause: BaseException) -> NoReturn:
    """``raise error from cause``, unless a translation kept ``cause`` as it was: then
    re-raise it unchanged. ``raise exc from exc`` makes an exception its own cause, and
    whatever walks the chain (tracebacks, Temporal's failure converter) recurses until
    RecursionError, losing the real message."""
    if error is cause:
        raise cause
    raise error from cause


def cut_cause_cycles(error: BaseException) -> BaseException:
    """``error`` with any loop in its ``__cause__`` / ``__context__`` chain cut where it
    closes (third-party code can build one); returns ``error``."""
    seen: set[int] = set()
    node: BaseException | None = error
    while node is not None and id(node) not in seen:
        seen.add(id(node))
        for attr in ("__cause__", "__context__"):
            nxt = getattr(node, attr)
            if nxt is not None and id(nxt) in seen:
                setattr(node, attr, None)
        node = node.__cause__ or node.__context__
    return error
