"""One place that assembles a gate run for a verifier: `gate_input`.

Both `envfactory validate` (verifiers/validate.py) and the pipeline's gate activity
(workflows/store_services.py) gate through here, so a task is judged the same way on both paths:

- the verification layer (`verifiers.deps`): what the verifier installs at run time is
  provided offline in an image built once per task image; verifications start from it,
  solver sandboxes never do. What it could not provide is passed on, so an oracle that
  fails for want of it is reported ``verifier-unrunnable``, not ``rejected``;
- the static probes, with module shadowing tailored to what the verifier imports;
- the traced probes (`verifiers.surface`): once the oracle passes, the verifier runs on
  it under a tracer and every solver-writable path it looked up gets a planted file.
"""

from __future__ import annotations

from collections.abc import Callable

from envfactory.core.models import EnvironmentSpec, StateRef, Verifier
from sandboxes.protocol import SandboxEngine

from .deps import verification_image
from .gates import GateInput, Progress
from .probes import PROBES, Probe, probes_for
from .probes.applicability import Traced
from .runner import PreparedState, verifier_tar
from .surface import traced_battery


def gate_input(
    engine: SandboxEngine,
    *,
    spec: EnvironmentSpec,
    verifier: Verifier,
    files: Callable[[str], bytes],
    image: str,
    repeats: int = 3,
    concurrency: int = 2,
    regressions: tuple[StateRef, ...] = (),
    probes: tuple[Probe, ...] | None = None,
    progress: Progress | None = None,
    trace: bool = True,
) -> tuple[GateInput, tuple[str, ...]]:
    """The gate input for `verifier` on the built `image`, and notes for the report.
    `probes=None` means the full library tailored to this verifier."""
    vtar = verifier_tar(verifier, files)
    layer = verification_image(engine, image, {name: data for name, (data, _) in vtar.items()})
    notes = list(layer.notes)
    if layer.missing:
        notes.append("the verification layer could not provide: " + ", ".join(layer.missing))

    def traced(prepared: PreparedState, vfiles: dict[str, tuple[bytes, int]]) -> Traced:
        return traced_battery(engine, prepared, spec=spec, verifier=verifier, verifier_files=vfiles)

    inp = GateInput(
        engine=engine,
        spec=spec,
        verifier=verifier,
        files=files,
        image=image,
        repeats=repeats,
        regressions=regressions,
        probes=probes_for(vtar) if probes is None else probes,
        concurrency=concurrency,
        progress=progress,
        verify_image=layer.image if layer.image != image else None,
        missing=layer.missing,
        provided=layer.provided,
        traced_probes=traced if trace and (probes is None or probes == PROBES) else None,
    )
    return inp, tuple(notes)
