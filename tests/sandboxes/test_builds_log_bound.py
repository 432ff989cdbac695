"""A build that prints without bound keeps a bounded tail (issue 46, item 4), on the real engine.

Regression: every chunk of a build's output was kept in a list and joined; a `RUN` printing
1.5 GB took `envfactory validate` from 52 MB to a 2.73 GB peak. Validate, pack builds,
mining and the worker all build through `run_build`, so its tail is the one bound: here a
`RUN` prints 3 MB (30,000 lines of 100 bytes) and at most 1 MiB is kept, the rest counted.
"""

from __future__ import annotations

import re
import tracemalloc
import uuid

import pytest

from envfactory.core.errors import ImageBuildFailed
from sandboxes import DockerEngine
from sandboxes.builds import LOG_TAIL_BYTES, env_labels, run_build
from sandboxes.log_tail import LOG_LIMIT_BYTES
from tests.verifiers.gate_tasks import context_tar

pytestmark = pytest.mark.docker

PRINTED = 3_000_000  # bytes of x, folded into lines of 100 (each line 101 bytes with \n)
LINES = PRINTED // 100
LOUD = f"RUN echo {{marker}} && head -c {PRINTED} /dev/zero | tr '\\0' 'x' | fold -w 100"
NOTE = re.compile(r"^\[envfactory: ([\d,]+) bytes \(([\d,]+) lines\) of this log were dropped")


def context(dockerfile: str) -> bytes:
    return context_tar({"Dockerfile": dockerfile})


def dropped(text: str) -> tuple[int, int]:
    found = NOTE.match(text)
    assert found, f"no note of what was dropped: {text[:200]!r}"
    return int(found.group(1).replace(",", "")), int(found.group(2).replace(",", ""))


def loud(base: str, *, then: str = "") -> str:
    return f"FROM {base}\n" + LOUD.format(marker=uuid.uuid4().hex) + then + "\n"


def test_a_build_printing_3_mb_holds_at_most_1_mib_and_counts_the_rest(
    docker_engine: DockerEngine, base_image: str
) -> None:
    tag = f"envfactory/env:loud-{uuid.uuid4().hex[:12]}"
    tracemalloc.start()
    try:
        out = run_build(
            docker_engine.client,
            context(loud(base_image)),
            tag=tag,
            dockerfile="Dockerfile",
            labels=env_labels("loud", docker_engine.run_id),
            network=False,
            timeout_s=300,
        )
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
        docker_engine.remove_image(tag)
    text = out.log.text()
    gone, gone_lines = dropped(text)
    print(
        f"printed {out.log.total_bytes:,} bytes in {out.log.total_lines:,} lines; kept"
        f" {len(text.encode()):,}, dropped {gone:,} bytes ({gone_lines:,} lines);"
        f" traced peak {peak:,} bytes"
    )
    assert len(text.encode()) <= LOG_LIMIT_BYTES
    assert out.log.total_bytes > PRINTED + LINES and out.log.total_lines > LINES
    assert gone > PRINTED + LINES - LOG_LIMIT_BYTES and gone_lines > LINES - LOG_LIMIT_BYTES // 101
    assert "Successfully built" in text and text.rstrip().endswith(tag)
    # the old list of chunks and its join alone held twice the 3 MB printed
    assert peak < 2 * LOG_LIMIT_BYTES + 512 * 1024, f"peak {peak:,} bytes traced"


def test_the_stored_build_result_keeps_64_kib_and_says_how_much_it_printed(
    docker_engine: DockerEngine, base_image: str
) -> None:
    res = docker_engine.build(context(loud(base_image)))
    try:
        gone, _ = dropped(res.log_tail)
        assert len(res.log_tail.encode()) <= LOG_TAIL_BYTES
        assert res.log_bytes > PRINTED + LINES and res.log_lines > LINES
        assert gone + len(res.log_tail.encode()) > res.log_bytes - 1024  # minus the note
        assert "Successfully built" in res.log_tail
    finally:
        docker_engine.remove_image(res.tag)


def test_a_failing_loud_build_raises_with_a_bounded_log(
    docker_engine: DockerEngine, base_image: str
) -> None:
    with pytest.raises(ImageBuildFailed) as err:
        docker_engine.build(context(loud(base_image, then=" && echo the-last-words && false")))
    log = err.value.log
    gone, _ = dropped(log)
    assert len(log.encode()) <= LOG_LIMIT_BYTES and gone > PRINTED - LOG_LIMIT_BYTES
    assert "the-last-words" in log and "returned a non-zero code" in str(err.value)
