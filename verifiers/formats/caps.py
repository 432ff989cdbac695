"""Imported limits clamped to the operator's ceilings (`LimitCaps`, settings.sandbox.task_caps).

A task a stranger wrote says how much memory, CPU, disk and time it needs; the operator
says how much any task may have. A value above the ceiling is lowered to it, and the task
carries a warning naming the field and both values (shown at import and repeated in the
gate report's notes): the task still imports, and its gates say what it was given. Values
that are no number at all (non-finite, negative, zero) are refused by the readers' own
models before this runs.
"""

from __future__ import annotations

from envfactory.core.models import LimitCaps, Limits

#: the words every clamping warning holds (what the import's output picks them out by)
CLAMPED = "is above the operator's ceiling; clamped to"

#: the `Limits` fields a ceiling applies to, each with its setting's name
_CAPPED = ("cpus", "memory_mb", "disk_mb", "pids", "exec_timeout_s")


def clamp(
    limits: Limits, verifier_timeout_s: int, caps: LimitCaps, where: str
) -> tuple[Limits, int, list[str]]:
    """`limits` and the verifier's timeout within `caps`, and a warning per value lowered
    (`where`: the file the values came from, named in the warning)."""
    warnings: list[str] = []
    lowered: dict[str, float | int] = {}
    for name in _CAPPED:
        asked, cap = getattr(limits, name), getattr(caps, name)
        if asked > cap:
            lowered[name] = cap
            warnings.append(_warning(where, name, asked, cap, name))
    if verifier_timeout_s > caps.verifier_timeout_s:
        cap = caps.verifier_timeout_s
        warnings.append(
            _warning(
                where, "the verifier's timeout_s", verifier_timeout_s, cap, "verifier_timeout_s"
            )
        )
        verifier_timeout_s = cap
    return limits.model_copy(update=lowered), verifier_timeout_s, warnings


def _warning(where: str, what: str, asked: float, cap: float, setting: str) -> str:
    return (
        f"{where}: {what} = {_number(asked)} {CLAMPED} {_number(cap)} "
        f"(ENVFACTORY_SANDBOX__TASK_CAPS__{setting.upper()} allows more)"
    )


def _number(x: float) -> str:
    """As the task wrote it: 99999999, not 1e+08."""
    return str(int(x)) if float(x).is_integer() else str(x)
