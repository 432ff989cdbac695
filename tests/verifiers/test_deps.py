"""Verifier dependencies: detection on differently phrased verifiers (no Docker), and the
verification layer end to end (real Docker): a TB2-style test.sh that installs curl, uv
and pytest at run time passes offline from the layer when the answer is right and fails
when it is wrong; a Python the release lacks is named in `missing`.
"""

from __future__ import annotations

import io
import tarfile
import time

import pytest

from envfactory.core.models import Purpose
from sandboxes.builds import Context, rewrite_from_lines
from verifiers.deps import (
    MANIFEST,
    PipInstall,
    Requirements,
    detect_requirements,
    ensure_verification_layer,
    layer_context,
    layer_script,
    verification_image,
)

# -- detection (no Docker) ------------------------------------------------------------

TB2 = b"""#!/bin/bash
apt-get update
apt-get install -y curl
curl -LsSf https://astral.sh/uv/0.9.5/install.sh | sh
source $HOME/.local/bin/env
uvx -p 3.13 -w pytest==8.4.1 -w pytest-json-ctrf==0.3.5 pytest --ctrf /logs/verifier/ctrf.json /tests/test_outputs.py -rA
if [ $? -eq 0 ]; then echo 1 > /logs/verifier/reward.txt; else echo 0 > /logs/verifier/reward.txt; fi
"""


def test_stock_tb2_script_needs_curl_uv_and_a_pinned_pytest_under_python_3_13() -> None:
    r = detect_requirements({"test.sh": TB2})
    assert r.apt == ("curl",)
    assert (r.uv_installer, r.uv_version) == (True, "0.9.5")
    (cmd,) = r.uv_commands
    assert cmd.kind == "uvx" and cmd.tool == "pytest" and cmd.python == "3.13"
    assert cmd.with_packages == ("pytest==8.4.1", "pytest-json-ctrf==0.3.5")
    assert cmd.argv[-1] == "pytest"  # the tool's own arguments are not part of the pre-run
    assert r.urls == () and r.pythons == ("3.13",)
    assert any(f.startswith("test.sh:3: apt-get install") for f in r.found)


def test_wget_installer_with_long_flags_and_uv_tool_run() -> None:
    script = b"""#!/bin/sh
set -eu
wget -qO- https://astral.sh/uv/install.sh | sh
. "$HOME/.local/bin/env"
uv tool run --python=3.12 --with=pytest==8.3.5,pytest-timeout pytest -q tests/
"""
    r = detect_requirements({"run.sh": script})
    assert r.uv_installer and r.uv_version is None
    (cmd,) = r.uv_commands
    assert cmd.python == "3.12" and cmd.with_packages == ("pytest==8.3.5", "pytest-timeout")
    assert cmd.argv[:3] == ("uv", "tool", "run")


def test_python3_m_pip_requirements_file_is_read_from_the_verifier_files() -> None:
    script = b"python3 -m pip install --no-cache-dir -r /tests/requirements-test.txt\n"
    reqs = b"# pinned\npytest==8.4.1  # the runner\n\n-r extra.txt\n--index-url https://x\n"
    r = detect_requirements(
        {"test.sh": script, "requirements-test.txt": reqs, "extra.txt": b"numpy>=2\n"}
    )
    assert {p.packages[0] for p in r.pip} == {"pytest==8.4.1", "numpy>=2"}
    assert all(p.installer == ("python3", "-m", "pip") for p in r.pip)


def test_a_missing_requirements_file_is_a_note_naming_it() -> None:
    r = detect_requirements({"test.sh": b"pip3 install -r requirements.txt\n"})
    assert r.pip == ()
    assert any("requirements.txt is not among the verifier's files" in n for n in r.notes)


def test_multi_line_apt_install_with_options_and_sudo() -> None:
    script = b"""#!/bin/bash
sudo DEBIAN_FRONTEND=noninteractive apt-get install -y \\
    --no-install-recommends \\
    -o Dpkg::Options::=--force-confdef \\
    jq sqlite3 \\
    python3-pytest 2>/dev/null
apt install -qq ripgrep && echo done
"""
    r = detect_requirements({"test.sh": script})
    assert r.apt == ("jq", "sqlite3", "python3-pytest", "ripgrep")


def test_python_verifier_that_subprocesses_pip_and_downloads_a_file() -> None:
    code = b"""import os, subprocess, sys, urllib.request
subprocess.check_call([sys.executable, "-m", "pip", "install", "pandas==2.2.2"])
subprocess.run("pip install --user pyyaml 2>&1", shell=True, check=True)
os.system("apt-get install -y sqlite3")
urllib.request.urlretrieve("https://example.com/golden.csv", "/tmp/golden.csv")
def test_x():
    pass
"""
    r = detect_requirements({"test_outputs.py": code})
    assert PipInstall(installer=("python3", "-m", "pip"), packages=("pandas==2.2.2",)) in r.pip
    assert PipInstall(installer=("pip",), packages=("pyyaml",), flags=("--user",)) in r.pip
    assert r.apt == ("sqlite3",)
    assert r.urls == ("https://example.com/golden.csv",)


def test_uv_run_with_and_uv_pip_install_system() -> None:
    script = b"""uv pip install --system pytest==8.4.1 requests
uv run --with pytest --with pytest-cov -p 3.11 pytest /tests -q
uv run python check.py
"""
    r = detect_requirements({"test.sh": script})
    assert [p.installer for p in r.pip] == [("uv", "pip"), ("uv", "pip")]
    assert all(p.flags == ("--system",) for p in r.pip)
    (cmd,) = r.uv_commands  # `uv run python` with nothing to fetch is not a requirement
    assert cmd.kind == "uv run" and cmd.with_packages == ("pytest", "pytest-cov")


def test_other_downloads_are_network_needs_and_heredoc_bodies_are_not_commands() -> None:
    script = b"""#!/bin/bash
curl -fsSL -o /tmp/model.bin "https://huggingface.co/x/resolve/main/model.bin"
git clone https://github.com/example/fixtures.git /tmp/fx
cat > /tmp/notes.txt <<'EOF'
apt-get install -y not-a-real-line
EOF
pip install git+https://github.com/example/lib.git
"""
    r = detect_requirements({"test.sh": script})
    assert r.urls == (
        "https://huggingface.co/x/resolve/main/model.bin",
        "https://github.com/example/fixtures.git",
        "git+https://github.com/example/lib.git",
    )
    assert r.apt == ()


def test_pip3_with_versioned_interpreter_and_github_installer_url() -> None:
    script = b"""curl -LsSf https://github.com/astral-sh/uv/releases/download/0.8.0/uv-installer.sh | sh
python3.11 -m pip install "pytest>=8,<9" 'hypothesis==6.100.0'
pip3 install --break-system-packages numpy
"""
    r = detect_requirements({"verify.sh": script})
    assert r.uv_version == "0.8.0"
    assert {(p.installer, p.packages[0]) for p in r.pip} == {
        (("python3.11", "-m", "pip"), "pytest>=8,<9"),
        (("python3.11", "-m", "pip"), "hypothesis==6.100.0"),
        (("pip3",), "numpy"),
    }


def test_a_verifier_without_installs_needs_nothing() -> None:
    r = detect_requirements({"test.sh": b"#!/bin/sh\npython3 -m pytest -q test_outputs.py\n"})
    assert r.empty


def test_the_layer_script_quotes_what_the_verifier_wrote() -> None:
    """A package name is data: it must reach the build shell quoted, never as code."""
    r = Requirements(apt=("curl; touch /pwned",))
    script = layer_script(r)
    assert "'curl; touch /pwned'" in script
    assert "curl; touch /pwned\n" not in script.replace("'curl; touch /pwned'", "")


IMAGE_ID = "sha256:" + "ab" * 32


def test_the_layer_context_is_the_same_bytes_for_the_same_image_and_requirements() -> None:
    """The engine caches builds by context content: a changing byte would rebuild."""
    r = detect_requirements({"test.sh": TB2})
    one = layer_context(r, IMAGE_ID, "envfactory/base-python:x")
    assert one == layer_context(
        detect_requirements({"test.sh": TB2}), IMAGE_ID, "envfactory/base-python:x"
    )
    assert one != layer_context(r, "sha256:" + "cd" * 32, "envfactory/base-python:x")


@pytest.mark.docker
def test_from_rewriting_leaves_the_task_image_id_and_the_uv_stage_alone(docker_engine) -> None:  # type: ignore[no-untyped-def]
    """The layer names the task image by id and the uv stage by our local tag: neither
    may be mapped to a stand-in base image (that would verify against another image)."""
    context = layer_context(
        detect_requirements({"test.sh": TB2}), IMAGE_ID, "envfactory/base-python:x"
    )
    dockerfile = (Context.from_tar(context).read("Dockerfile") or b"").decode()
    assert f"FROM {IMAGE_ID}" in dockerfile
    _, subs = rewrite_from_lines(dockerfile, docker_engine.resolve_from)
    assert subs == ()


# -- the layer end to end (real Docker) -------------------------------------------------

TESTS_PY = b"""from pathlib import Path

def test_answer():
    assert Path("/app/answer.txt").read_text().strip() == "42"
"""
TB2_OFFLINE = b"""#!/bin/bash
apt-get update
apt-get install -y curl
curl -LsSf https://astral.sh/uv/0.9.5/install.sh | sh
source $HOME/.local/bin/env
python3 -m pip install -r /tests/requirements-test.txt
mkdir -p /logs/verifier
uvx -p PY -w pytest==8.4.1 -w pytest-json-ctrf==0.3.5 pytest --ctrf /logs/verifier/ctrf.json /tests/test_outputs.py -rA
rc=$?
if [ $rc -eq 0 ]; then echo 1 > /logs/verifier/reward.txt; else echo 0 > /logs/verifier/reward.txt; fi
exit $rc
"""
REQS = b"iniconfig==2.1.0\n"
RUNNER_ENV = (
    "/usr/bin/env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin "
    "HOME=/root LANG=C.UTF-8 /bin/sh -c 'cd /tests && bash test.sh'"
)


def _tar(members: dict[str, str]) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for name, text in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(text.encode())
            tar.addfile(info, io.BytesIO(text.encode()))
    return buf.getvalue()


def _files(python: str) -> dict[str, bytes]:
    return {
        "test.sh": TB2_OFFLINE.replace(b"PY", python.encode()),
        "test_outputs.py": TESTS_PY,
        "requirements-test.txt": REQS,
    }


@pytest.fixture(scope="module")
def task_image(docker_engine, base_image) -> str:  # type: ignore[no-untyped-def]
    """The python base plus an unsolved answer file (the solver would write 42)."""
    dockerfile = "FROM python:3.11-slim\nRUN mkdir -p /app && echo 41 > /app/answer.txt\n"
    return docker_engine.build(_tar({"Dockerfile": dockerfile})).image


@pytest.fixture(scope="module")
def layer(docker_engine, task_image):  # type: ignore[no-untyped-def]
    t0 = time.monotonic()
    built = verification_image(docker_engine, task_image, _files("3.11"))
    print(f"\nlayer build: {time.monotonic() - t0:.1f}s (engine build {built.build_s:.1f}s)")
    return built


def _run_offline(engine, image: str, files: dict[str, bytes], answer: str | None):  # type: ignore[no-untyped-def]
    with engine.sandbox(image, purpose=Purpose.VERIFY, network=False) as box:
        for name, data in files.items():
            box.write_file(f"/tests/{name}", data, 0o755)
        if answer is not None:
            box.write_file("/app/answer.txt", answer + "\n")
        t0 = time.monotonic()
        res = box.exec(RUNNER_ENV, timeout=300)
        print(f"verifier offline: {time.monotonic() - t0:.1f}s, exit {res.exit_code}")
        reward = box.exec("cat /logs/verifier/reward.txt").stdout.strip()
    return res, reward


@pytest.mark.docker
@pytest.mark.slow
def test_layer_names_what_it_provides_and_is_reused(docker_engine, task_image, layer) -> None:  # type: ignore[no-untyped-def]
    assert layer.missing == ()
    assert "apt: curl" in layer.provided and "uv 0.9.5 (PyPI)" in layer.provided
    assert "iniconfig==2.1.0 (python3 -m pip)" in layer.provided
    assert any(p.startswith("uvx pytest -p 3.11") and "(cached)" in p for p in layer.provided)
    again = ensure_verification_layer(
        docker_engine, task_image, detect_requirements(_files("3.11"))
    )
    assert again.cached and again.image == layer.image


@pytest.mark.docker
@pytest.mark.slow
def test_tb2_verifier_passes_offline_from_the_layer_when_the_answer_is_right(
    docker_engine, layer
) -> None:  # type: ignore[no-untyped-def]
    res, reward = _run_offline(docker_engine, layer.image, _files("3.11"), "42")
    assert res.exit_code == 0, res.stdout[-3000:] + res.stderr[-3000:]
    assert reward == "1"
    assert "curl is already the newest version" in res.stdout
    assert "Requirement already satisfied: iniconfig==2.1.0" in res.stdout


@pytest.mark.docker
@pytest.mark.slow
def test_tb2_verifier_fails_offline_from_the_layer_when_the_answer_is_wrong(
    docker_engine, layer
) -> None:  # type: ignore[no-untyped-def]
    res, reward = _run_offline(docker_engine, layer.image, _files("3.11"), None)
    assert res.exit_code != 0 and reward == "0"
    assert "1 failed" in res.stdout  # pytest ran and judged: not an install failure


@pytest.mark.docker
@pytest.mark.slow
def test_the_solver_image_does_not_hold_the_layer(docker_engine, task_image, layer) -> None:  # type: ignore[no-untyped-def]
    with docker_engine.sandbox(task_image, network=False) as box:
        res = box.exec(f"test -e {MANIFEST} || test -e /root/.local/bin/uv; echo $?")
    assert res.stdout.strip() == "1" and layer.image != task_image


@pytest.mark.docker
@pytest.mark.slow
def test_python_3_13_on_bookworm_is_missing_and_the_rest_is_built(
    docker_engine, task_image
) -> None:  # type: ignore[no-untyped-def]
    script = b"""#!/bin/bash
curl -LsSf https://astral.sh/uv/0.9.5/install.sh | sh
source $HOME/.local/bin/env
uvx -p 3.13 -w pytest==8.4.1 pytest /tests/test_outputs.py
"""
    t0 = time.monotonic()
    built = verification_image(docker_engine, task_image, {"test.sh": script})
    print(f"\nlayer build (python 3.13 missing): {time.monotonic() - t0:.1f}s")
    assert "python 3.13 (not in this image's release)" in built.missing
    assert "uv 0.9.5 (PyPI)" in built.provided
