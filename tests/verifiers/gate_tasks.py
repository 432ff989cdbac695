"""Gate runs over tasks a test writes in a few lines: an image built from a handful of
text files, a one-file shell verifier, the gates with only the probes the test is about.

    image = docker_engine.build(context_tar({"Dockerfile": ..., "users.txt": ...})).image
    report = gate_shell(engine, image, SPEC, b"#!/bin/sh\\n...", probes=(RewardFile(),))
"""

from __future__ import annotations

import io
import tarfile
from collections.abc import Mapping
from typing import Any

from envfactory.core.models import (
    BuildContext,
    EnvironmentSpec,
    FileEntry,
    GateReport,
    Provenance,
    Step,
    Verifier,
)
from verifiers.gates import GateInput, run_gates
from verifiers.surface import traced_battery

from .sumtask import MemoryFiles


def context_tar(files: Mapping[str, str]) -> bytes:
    """A build context holding `files` (name → text)."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tf:
        for name, text in files.items():
            data = text.encode()
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def app_spec(name: str, instruction: str, *steps: tuple[str, str]) -> EnvironmentSpec:
    """A task working in /app (its only workspace) whose reference runs `steps`, each
    (title, shell script)."""
    return EnvironmentSpec(
        id=f"env-{name}",
        name=name,
        instruction=instruction,
        build=BuildContext(files=()),
        workdir="/app",
        workspace_paths=("/app",),
        reference_solution=tuple(Step(title=t, script=script) for t, script in steps),
    )


def workspace_of(
    files: Mapping[str, bytes], root: str = "/workspace"
) -> list[tuple[str, bytes | None]]:
    """A state's workspace tars (as the gates capture them): `root` holding `files`
    (relative path → bytes)."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tf:
        for rel, data in files.items():
            info = tarfile.TarInfo(f"{root.strip('/')}/{rel}")
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
    return [(root, buf.getvalue())]


def gate_shell(
    engine: Any,
    image: str,
    spec: EnvironmentSpec,
    script: bytes,
    *,
    traced: bool = False,
    **knobs: Any,
) -> GateReport:
    """The gates over `image` with `script` as the verifier (`sh test.sh`), one repeat;
    `knobs` go to `GateInput` (`probes`, `omissions`, …); `traced` adds the probes built
    from the verifier's traced run on the oracle."""
    files = MemoryFiles()
    verifier = Verifier(
        env_id=spec.id,
        files=(FileEntry(path="test.sh", key=files.put(script), mode=0o755),),
        entry="sh test.sh",
        timeout_s=60,
        provenance=Provenance(author="human:test"),
    )

    def battery(prepared: Any, vfiles: Any) -> Any:
        return traced_battery(engine, prepared, spec=spec, verifier=verifier, verifier_files=vfiles)

    return run_gates(
        GateInput(
            engine=engine,
            spec=spec,
            verifier=verifier,
            files=files,
            image=image,
            repeats=1,
            concurrency=2,
            traced_probes=battery if traced else None,
            **knobs,
        )
    )
