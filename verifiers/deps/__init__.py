"""Verifier dependencies: what a verifier installs or fetches at run time, and a
verification layer, built once per task image, that makes those lines succeed offline.

Real Terminal-Bench 2 verifiers install their tools when they run (`apt-get install -y
curl`, the uv installer from astral.sh, `uvx -p 3.13 -w pytest==8.4.1 pytest …`, `pip
install -r requirements.txt`). envfactory runs every verification in a fresh container
with **no network**, so `detect_requirements` reads the verifier's shell and Python files
for those lines and `ensure_verification_layer` builds an image FROM the task image (with
build network) that already holds the result: the apt packages, `uv`/`uvx` from PyPI in
`$HOME/.local/bin` with the installer's `env` file, uv's cache warmed by one pre-run of
each `uvx`/`uv run`/`uv tool` line, the pip packages, and `/etc/uv/uv.toml` saying
`offline = true` and `python-downloads = "never"`.

Invariants:
- the layer is for verification containers only, never for solver sandboxes: the solver
  never sees what the verifier needs (DESIGN.md invariant 2);
- cached by content: the generated Dockerfile + script name the task image by id, so the
  same task image and requirements reuse the same image (`engine.build`'s content cache),
  tagged `envfactory/verify:<hash>`;
- a requirement that cannot be provided (a Python the release lacks, a package the mirror
  or PyPI lacks, a URL the run would download) is named in `missing`; the layer is still
  built with the rest. The build script never fails on one requirement: it records each
  outcome in `MANIFEST` inside the image, which is read back after every (cached) build;
- model-free; everything the verifier wrote is shell-quoted before it reaches the build.

What the run-time lines do in a container from the layer, started as the runner starts
it (`--network none`, every capability dropped, `env -i PATH=… HOME=/root`), seen here
on bookworm (Docker 20.10, uv 0.9.5):
- `apt-get update` prints "Temporary failure resolving 'deb.debian.org'" (or "Method
  http has died") and setgroups errors and exits 100 (TB2 scripts do not `set -e` around
  it). The layer sets `Acquire::Retries "0"` (default retries back off for ~9 s) and
  deletes the package lists it fetched (as the base image does): at load average ~25
  `apt-get update` then took 3.7 s instead of 38 s;
- `apt-get install -y curl` of a package the layer installed prints "curl is already the
  newest version" and exits 0, lists or not (1.7 s without lists, 27 s with them at
  that load; chown warnings on apt's partial dirs are harmless);
- `curl -LsSf https://astral.sh/uv/0.9.5/install.sh | sh`: curl says "Could not resolve
  host", sh reads nothing and exits 0, so the pipeline exits 0;
- `source $HOME/.local/bin/env` puts `/root/.local/bin` first on PATH, exit 0;
- `uvx -p 3.11 -w pytest==8.4.1 -w pytest-json-ctrf==0.3.5 pytest …` runs from uv's
  cache (0.5 s on an idle machine, 13 s at load ~25); `uvx -p 3.13 …` on bookworm fails with "No interpreter found for Python
  3.13 … Python downloads are set to 'never'" — listed in `missing` at build time;
- `pip install pkg==v` of an installed pin says "Requirement already satisfied", exit 0.
"""

from .detect import PipInstall, Requirements, UvCommand, detect_requirements
from .layer import (
    LAYER_REPO,
    MANIFEST,
    VerificationLayer,
    ensure_verification_layer,
    layer_context,
    layer_script,
    verification_image,
)

__all__ = [
    "LAYER_REPO",
    "MANIFEST",
    "PipInstall",
    "Requirements",
    "UvCommand",
    "VerificationLayer",
    "detect_requirements",
    "ensure_verification_layer",
    "layer_context",
    "layer_script",
    "verification_image",
]
