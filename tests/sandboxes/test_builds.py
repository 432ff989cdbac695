"""Environment image builds on the real engine: FROM-mapping, content cache, logs, timeouts."""

from __future__ import annotations

import io
import tarfile
import time
import uuid

import pytest

from envfactory.core.errors import ImageBuildFailed
from envfactory.core.models import Purpose
from envfactory.core.settings import SandboxSettings
from sandboxes import DockerEngine

pytestmark = pytest.mark.docker


def context(files: dict[str, str], mtime: int = 1) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for name, text in files.items():
            data = text.encode()
            info = tarfile.TarInfo(name)
            info.size, info.mtime = len(data), mtime
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


@pytest.mark.slow
def test_a_dockerfile_for_the_official_python_image_builds_unchanged(
    docker_engine: DockerEngine, base_image: str
) -> None:
    dockerfile = (
        "FROM python:3.11-slim\n"
        "RUN pip install --no-deps six==1.16.0\n"
        "COPY app.py /app/app.py\n"
        "WORKDIR /app\n"
    )
    res = docker_engine.build(context({"Dockerfile": dockerfile, "app.py": "import six\n"}))
    try:
        assert res.substitutions == (f"python:3.11-slim -> {base_image}",)
        assert "Successfully built" in res.log_tail
        with docker_engine.sandbox(res.image, purpose=Purpose.TEST) as sb:
            out = sb.exec("python3 app.py && python3 -c 'import six; print(six.__file__)'")
            assert out.exit_code == 0, out.stderr
            assert out.stdout.startswith("/usr/local/lib/python3")  # installed system-wide
    finally:
        docker_engine.remove_image(res.tag)


def test_the_same_context_is_built_once(docker_engine: DockerEngine, base_image: str) -> None:
    files = {"Dockerfile": f"FROM {base_image}\nRUN echo {uuid.uuid4().hex} > /id\n"}
    lines: list[str] = []
    first = docker_engine.build(context(files, mtime=1), on_log=lines.append)
    try:
        again = docker_engine.build(context(files, mtime=12345))
        assert not first.cached and again.cached
        assert again.image == first.image and again.context_hash == first.context_hash
        assert any("Successfully built" in line for line in lines)
        labels = docker_engine.client.images.get(first.image).labels
        assert labels["envfactory.owner"] == "envfactory" and labels["envfactory.kind"] == "env"
    finally:
        docker_engine.remove_image(first.tag)


def test_a_failing_build_raises_with_its_log(docker_engine: DockerEngine, base_image: str) -> None:
    files = {"Dockerfile": f"FROM {base_image}\nRUN echo marker-{uuid.uuid4().hex[:6]} && false\n"}
    with pytest.raises(ImageBuildFailed) as err:
        docker_engine.build(context(files))
    assert "marker-" in err.value.log and "returned a non-zero code" in str(err.value)


def test_a_context_without_its_dockerfile_is_refused_with_a_hint(
    docker_engine: DockerEngine,
) -> None:
    with pytest.raises(ImageBuildFailed, match="no Dockerfile"):
        docker_engine.build(context({"app.py": "print(1)\n"}))


def test_a_build_past_its_timeout_is_abandoned(
    docker_engine: DockerEngine, base_image: str
) -> None:
    engine = DockerEngine(
        SandboxSettings(build_timeout_s=10),
        client=docker_engine.client,
        run_id=docker_engine.run_id,
    )
    marker = 600 + uuid.uuid4().int % 300  # a sleep length nobody else runs
    files = {"Dockerfile": f"FROM {base_image}\nRUN echo start && sleep {marker}\n"}
    with pytest.raises(ImageBuildFailed, match="timeout"):
        engine.build(context(files))
    # The daemon cancels the build when we hang up: its RUN container goes away.
    for _ in range(60):
        running = [
            c for c in docker_engine.client.api.containers() if f"sleep {marker}" in c["Command"]
        ]
        if not running:
            break
        time.sleep(0.5)
    assert running == []


def test_a_custom_from_map_entry_wins(docker_engine: DockerEngine, base_image: str) -> None:
    engine = DockerEngine(
        SandboxSettings(from_map={"company/runtime:*": base_image}),
        client=docker_engine.client,
        run_id=docker_engine.run_id,
    )
    files = {"Dockerfile": f"FROM company/runtime:7\nRUN echo {uuid.uuid4().hex} > /id\n"}
    res = engine.build(context(files))
    engine.remove_image(res.tag)
    assert res.substitutions == (f"company/runtime:7 -> {base_image}",)
