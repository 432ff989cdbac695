"""Base images without a registry: a minimal Debian made with debootstrap, plus flavours.

`minimal` is `debootstrap --variant=minbase` of a Debian release (bookworm by default;
trixie for references that name Debian 13, see `builds.BUILTIN_MAP`) from the host's apt
mirror with our package list and the host's CA bundle (this network intercepts https),
imported with `docker import`. apt's sources are laid out as in the official Debian images
(deb822 `/etc/apt/sources.list.d/debian.sources`), since task Dockerfiles edit that file.
`python` is a tiny Dockerfile on top that makes `/usr/local` a venv, so `python3`/`pip` in /usr/local/bin behave like the official `python:*` image (pip installs
system-wide, no externally-managed refusal).

Invariants: a base image is tagged by the hash of its recipe (suite, variant, packages,
mirror, CA bundle, procedure version) and reused while that hash is unchanged; every
image carries our ownership labels; one host mirror serves every release (the host's
Debian 12 debootstrap and archive keyring know and verify trixie).
"""

from __future__ import annotations

import fcntl
import hashlib
import io
import json
import shutil
import subprocess
import tarfile
import tempfile
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path

import docker
import docker.errors

from envfactory.core.errors import ConfigError, ImageBuildFailed, SandboxError

from . import labels as L
from .builds import run_build

BASE_REPO = "envfactory/base"
PYTHON_REPO = "envfactory/base-python"
FLAVOURS = ("minimal", "python")
# The seed vocabulary (`core.models.seeds.BaseFlavour`) names the minimal image "debian".
FLAVOUR_ALIASES = {"debian": "minimal"}
LOCK_PATH = Path("/var/tmp/envfactory-base-image.lock")
HOST_CA_BUNDLE = Path("/etc/ssl/certs/ca-certificates.crt")
IMAGE_CA_BUNDLE = "/etc/ssl/certs/ca-certificates.crt"
# Kept where update-ca-certificates looks, so a later `apt-get install` keeps the proxy CA.
IMAGE_EXTRA_CA = "usr/local/share/ca-certificates/envfactory-host-bundle.crt"
DEFAULT_PACKAGES = (
    "bash",
    "coreutils",
    "procps",
    "python3",
    "python3-pip",
    "python3-venv",
    "git",
    "ca-certificates",
)
PROCEDURE_VERSION = 2  # bump when the build steps below change (2: deb822 apt sources)
CA_ENV = {
    "SSL_CERT_FILE": IMAGE_CA_BUNDLE,
    "PIP_CERT": IMAGE_CA_BUNDLE,
    "REQUESTS_CA_BUNDLE": IMAGE_CA_BUNDLE,
    "CURL_CA_BUNDLE": IMAGE_CA_BUNDLE,
    "GIT_SSL_CAINFO": IMAGE_CA_BUNDLE,
    "LANG": "C.UTF-8",
    "PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
}
PYTHON_DOCKERFILE = """\
FROM {base}
ENV PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_ROOT_USER_ACTION=ignore PYTHONUNBUFFERED=1
# ensurepip can leave a .pyc older than its source (same second): the first `pip install`
# of every task would rewrite it, and site-packages would look tampered with. Compile all.
RUN python3 -m venv /usr/local && /usr/local/bin/python3 -m compileall -q /usr/local/lib \
    && /usr/local/bin/python3 -m pip --version
CMD ["python3"]
"""

# Suites of Debian's main archive: a mirror that serves one of them serves every release.
DEBIAN_SUITES = frozenset(
    {
        "buster",
        "bullseye",
        "bookworm",
        "trixie",
        "forky",
        "duke",
        "sid",
        "oldoldstable",
        "oldstable",
        "stable",
        "testing",
        "unstable",
    }
)
DEBIAN_SOURCES = """\
Types: deb
URIs: {mirror}
Suites: {suite}
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
"""

Log = Callable[[str], None]


def find_mirror(suite: str, apt_dir: Path = Path("/etc/apt")) -> str:
    """The `deb` URI in the host's apt sources that serves `suite`; failing that, the one
    that serves any Debian release (a bookworm host building trixie); else deb.debian.org."""
    candidates: list[Path] = [apt_dir / "sources.list"]
    candidates += sorted((apt_dir / "sources.list.d").glob("*.sources"))
    candidates += sorted((apt_dir / "sources.list.d").glob("*.list"))
    texts = [(p.suffix, p.read_text(errors="replace")) for p in candidates if p.is_file()]
    for wanted in (frozenset({suite}), DEBIAN_SUITES):
        for suffix, text in texts:
            found = _deb822_mirror(text, wanted) if suffix == ".sources" else None
            found = found or _one_line_mirror(text, wanted)
            if found:
                return found.rstrip("/")
    return "http://deb.debian.org/debian"


def _deb822_mirror(text: str, suites: frozenset[str]) -> str | None:
    for stanza in text.split("\n\n"):
        fields: dict[str, str] = {}
        for line in stanza.splitlines():
            if ":" in line and not line.startswith(("#", " ")):
                key, value = line.split(":", 1)
                fields[key.strip().lower()] = value.strip()
        if "deb" in fields.get("types", "").split() and suites & set(
            fields.get("suites", "").split()
        ):
            if fields.get("enabled", "yes").lower() != "no" and fields.get("uris"):
                return fields["uris"].split()[0]
    return None


def _one_line_mirror(text: str, suites: frozenset[str]) -> str | None:
    for line in text.splitlines():
        parts = [p for p in line.split() if not p.startswith("[")]
        if len(parts) >= 3 and parts[0] == "deb" and parts[2] in suites:
            return parts[1]
    return None


@dataclass(frozen=True)
class BaseRecipe:
    """Everything that determines the minimal base image; its hash is the image tag."""

    mirror: str
    ca_sha256: str
    suite: str = "bookworm"
    variant: str = "minbase"
    packages: tuple[str, ...] = DEFAULT_PACKAGES
    version: int = PROCEDURE_VERSION
    extra: dict[str, str] = field(default_factory=dict)

    @classmethod
    def from_host(cls, ca_bundle: Path = HOST_CA_BUNDLE, **kw: object) -> BaseRecipe:
        if not ca_bundle.is_file():
            raise ConfigError(
                f"CA bundle {ca_bundle} not found",
                hint="install ca-certificates on the host, or set ENVFACTORY_SANDBOX__BASE_IMAGE",
            )
        sha = hashlib.sha256(ca_bundle.read_bytes()).hexdigest()
        mirror = str(kw.pop("mirror", "") or find_mirror(str(kw.get("suite", "bookworm"))))
        return cls(mirror=mirror, ca_sha256=sha, **kw)  # type: ignore[arg-type]

    def hash(self) -> str:
        blob = json.dumps(asdict(self), sort_keys=True).encode()
        return hashlib.sha256(blob).hexdigest()[:16]


def image_exists(client: docker.DockerClient, ref: str) -> bool:
    try:
        client.images.get(ref)
    except docker.errors.ImageNotFound:
        return False
    return True


def build_minimal(
    client: docker.DockerClient,
    recipe: BaseRecipe,
    *,
    ca_bundle: Path = HOST_CA_BUNDLE,
    log: Log = lambda _: None,
    workdir: Path = Path("/var/tmp"),
) -> str:
    """debootstrap → tar → docker import; returns the tag. Needs root and debootstrap."""
    if shutil.which("debootstrap") is None:
        raise ConfigError(
            "debootstrap is not installed",
            hint="apt-get install -y debootstrap, or set ENVFACTORY_SANDBOX__BASE_IMAGE",
        )
    tag = f"{BASE_REPO}:{recipe.hash()}"
    with tempfile.TemporaryDirectory(prefix="envfactory-rootfs-", dir=workdir) as tmp:
        rootfs = Path(tmp) / "rootfs"
        cmd = [
            "debootstrap",
            f"--variant={recipe.variant}",
            "--include=" + ",".join(recipe.packages),
            recipe.suite,
            str(rootfs),
            recipe.mirror,
        ]
        log("$ " + " ".join(cmd))
        proc = subprocess.run(cmd, capture_output=True, text=True)
        log(proc.stdout[-20_000:] + proc.stderr[-20_000:])
        if proc.returncode != 0:
            said = (proc.stdout + proc.stderr).strip().splitlines()[-3:]
            raise SandboxError(
                f"debootstrap failed with exit code {proc.returncode}: " + " | ".join(said),
                hint=f"mirror {recipe.mirror} must be reachable, and {workdir} must allow device "
                "files and execution (not mounted nodev/noexec)",
            )
        _finish_rootfs(rootfs, recipe, ca_bundle)
        tar_path = Path(tmp) / "rootfs.tar"
        subprocess.run(
            ["tar", "--numeric-owner", "-C", str(rootfs), "-cf", str(tar_path), "."], check=True
        )
        changes = [f"ENV {k}={v}" for k, v in CA_ENV.items()] + ['CMD ["bash"]']
        lab = L.ownership("base", kind="base", recipe=recipe.hash())
        changes += [f"LABEL {k}={json.dumps(v)}" for k, v in lab.items()]
        with tar_path.open("rb") as f:  # an open file: a path string is taken as a URL
            client.api.import_image(src=f, repository=BASE_REPO, tag=recipe.hash(), changes=changes)
    if not image_exists(client, tag):
        raise SandboxError(f"docker import did not produce {tag}")
    log(f"imported {tag}")
    return tag


def _finish_rootfs(rootfs: Path, recipe: BaseRecipe, ca_bundle: Path) -> None:
    """Trust the host's CA bundle (intercepting proxy), point apt at the mirror, trim caches."""
    shutil.copyfile(ca_bundle, rootfs / IMAGE_CA_BUNDLE.lstrip("/"))
    extra = rootfs / IMAGE_EXTRA_CA
    extra.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(ca_bundle, extra)
    # As in the official images: deb822 sources, no sources.list (Dockerfiles sed the former).
    (rootfs / "etc/apt/sources.list").unlink(missing_ok=True)
    sources = rootfs / "etc/apt/sources.list.d/debian.sources"
    sources.parent.mkdir(parents=True, exist_ok=True)
    sources.write_text(DEBIAN_SOURCES.format(mirror=recipe.mirror, suite=recipe.suite))
    for junk in ("var/cache/apt/archives", "var/lib/apt/lists"):
        for p in (rootfs / junk).glob("*"):
            if p.is_file():
                p.unlink()


def build_python(client: docker.DockerClient, base_tag: str, *, log: Log = lambda _: None) -> str:
    """The `python:*` stand-in on top of `base_tag`; tagged by hash of base + Dockerfile."""
    dockerfile = PYTHON_DOCKERFILE.format(base=base_tag)
    digest = hashlib.sha256((base_tag + dockerfile).encode()).hexdigest()[:16]
    tag = f"{PYTHON_REPO}:{digest}"
    if image_exists(client, tag):
        return tag
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        data = dockerfile.encode()
        info = tarfile.TarInfo("Dockerfile")
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    lab = L.ownership("base", kind="base", recipe=digest)
    try:
        run_build(
            client,
            buf.getvalue(),
            tag=tag,
            dockerfile="Dockerfile",
            labels=lab,
            network=False,
            timeout_s=900,
            on_log=log,
        )
    except ImageBuildFailed as exc:
        raise SandboxError(f"building {tag} failed: {exc.message}", hint=exc.log[-2000:]) from exc
    return tag


def ensure_base_image(
    client: docker.DockerClient,
    flavour: str = "python",
    *,
    recipe: BaseRecipe | None = None,
    log: Log = lambda _: None,
) -> str:
    """The local base image tag for `flavour`, building what is missing (cached by recipe)."""
    flavour = FLAVOUR_ALIASES.get(flavour, flavour)
    if flavour not in FLAVOURS:
        raise ConfigError(
            f"unknown base flavour {flavour!r}",
            hint=f"choose one of {FLAVOURS + tuple(FLAVOUR_ALIASES)}",
        )
    recipe = recipe or BaseRecipe.from_host()
    base = f"{BASE_REPO}:{recipe.hash()}"
    # Several processes share one engine: a host-wide lock makes one of them build it.
    with open(LOCK_PATH, "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            if not image_exists(client, base):
                build_minimal(client, recipe, log=log)
            return base if flavour == "minimal" else build_python(client, base, log=log)
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)
