"""A suite-style Dockerfile written for BuildKit builds on the classic builder (real engine)."""

from __future__ import annotations

import io
import tarfile

import pytest

from envfactory.core.errors import ImageBuildFailed
from envfactory.core.models import Purpose
from sandboxes import DockerEngine

pytestmark = pytest.mark.docker

SUITE_DOCKERFILE = """\
# syntax=docker/dockerfile:1.4
FROM python:3.11-slim
ARG GREETING=hello
ENV APP_HOME=/app
WORKDIR /app
RUN <<EOF
set -e
mkdir -p /app/data
echo "home=$APP_HOME" > /app/data/script.txt
EOF
RUN cat > /usr/local/bin/greet <<'EOF' && chmod +x /usr/local/bin/greet
#!/bin/sh
echo "$1 from $APP_HOME"
EOF
RUN cat > /app/data/expanded.txt <<EOF
home=$APP_HOME
EOF
RUN <<-EOF
\techo tabbed > /app/data/tabs.txt
\tEOF
RUN <<EOF
#!/usr/bin/env python3
open("/app/data/py.txt", "w").write("python\\n")
EOF
COPY <<EOF /etc/greeting.conf
greeting=$GREETING
EOF
COPY <<'EOF' /etc/raw.conf
greeting=$GREETING
EOF
COPY --chmod=755 tool.sh /usr/local/bin/
"""

CHECKS = {
    "greet hi": "hi from /app",
    "cat data/script.txt data/expanded.txt data/tabs.txt data/py.txt": (
        "home=/app\nhome=/app\ntabbed\npython"
    ),
    "cat /etc/greeting.conf /etc/raw.conf": "greeting=hello\ngreeting=$GREETING",
    "stat -c %a /usr/local/bin/tool.sh && tool.sh": "755\ntool",
    "ls -a /tmp | grep -c envfactory-heredoc || true": "0",
}


def context(files: dict[str, str]) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for name, text in files.items():
            data = text.encode()
            info = tarfile.TarInfo(name)
            info.size, info.mode = len(data), 0o644
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


@pytest.mark.slow
def test_a_suite_dockerfile_with_heredocs_and_copy_chmod_builds_as_buildkit_would(
    docker_engine: DockerEngine, base_image: str
) -> None:
    tool = "#!/bin/sh\necho tool\n"
    res = docker_engine.build(context({"Dockerfile": SUITE_DOCKERFILE, "tool.sh": tool}))
    try:
        with docker_engine.sandbox(res.image, purpose=Purpose.TEST) as sb:
            for command, expected in CHECKS.items():
                out = sb.exec(command)
                assert out.exit_code == 0, (command, out.stderr)
                assert out.stdout.strip() == expected, command
    finally:
        docker_engine.remove_image(res.tag)


def test_a_dockerfile_line_the_classic_builder_cannot_build_is_refused_before_building(
    docker_engine: DockerEngine,
) -> None:
    dockerfile = "FROM python:3.11-slim\nRUN --mount=type=secret,id=token cat /run/secrets/token\n"
    with pytest.raises(ImageBuildFailed, match="Dockerfile line 2: RUN --mount=type=secret"):
        docker_engine.build(context({"Dockerfile": dockerfile}))
