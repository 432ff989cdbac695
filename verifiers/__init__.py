"""Model-free reward checks: verifier runner, gates, shortcut probes, task formats.

    verify_state(engine, state_image=, pristine_image=, spec=, verifier=, files=) -> VerifyResult
    run_gates(GateInput(...)) -> GateReport          # oracle, no-op, unsolved, probes, regressions
    findings_from_report(report) -> (ShortcutFinding, ...)
    PROBES                                           # the shortcut probe library
    validate_task(engine, path, artifacts) -> TaskValidation   # import + build + gates

Names are imported lazily so that `verifiers.formats` (and anything light) does not pull
the whole runner in.
"""

from __future__ import annotations

from typing import Any

_EXPORTS = {
    "verify_state": "runner",
    "VerifyResult": "runner",
    "run_gates": "gates",
    "GateInput": "gates",
    "findings_from_report": "evidence",
    "PROBES": "probes",
    "validate_task": "validate",
}


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        from importlib import import_module

        return getattr(import_module(f".{_EXPORTS[name]}", __name__), name)
    raise AttributeError(f"module 'verifiers' has no attribute {name!r}")


__all__ = sorted(_EXPORTS)
