"""Ending a process that owns sandboxes: no new sandbox starts, and its own are removed.

A command ended by SIGTERM or SIGINT must leave no container behind, even while worker
threads are still mid-episode or mid-gate. The process edge (`envfactory.cli.main`) calls
`begin()` when the signal arrives; from then on every launch raises `SandboxError` at
once (`refuse_if_stopping`, in the one path every container and services network takes),
so queued work fails fast instead of starting containers nobody will remove. Then
`remove_own()` removes every container and network this process created, by the owner
label each carries (`labels.OWNER_PROC`): a live one too, since its owner is ending. It
is called once at the signal and once more at exit, after the worker threads have
joined, for anything launched in between.
"""

from __future__ import annotations

import threading

import docker
import docker.errors

from envfactory.core.errors import SandboxError

from . import labels as L

_stopping = threading.Event()


def begin() -> None:
    """From now on, no sandbox of this process starts."""
    _stopping.set()


def stopping() -> bool:
    return _stopping.is_set()


def refuse_if_stopping() -> None:
    if _stopping.is_set():
        raise SandboxError("this process is stopping: no new sandbox starts")


def remove_own(client: docker.DockerClient | None = None) -> list[str]:
    """Remove every container and services network this process created (live ones
    too); what was removed. A fresh client unless given: the caller's may be mid-call."""
    from .gc import collect

    client = client or docker.from_env(timeout=60)
    try:
        return collect(client, include_live=True, owner_proc=L.this_process())
    finally:
        client.close()
