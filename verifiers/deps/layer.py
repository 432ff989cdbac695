"""The verification layer: an image FROM the task image that makes the verifier's
run-time installs succeed offline (see the package docstring for what was observed).

Invariants: the generated context is deterministic (same image id + requirements → same
bytes → the engine's content cache reuses the image); everything the verifier wrote is
shell-quoted; the build script never fails on one requirement but records each outcome
in `MANIFEST`, read back after every build, cached or not; the layer is for
verification containers only.
"""

from __future__ import annotations

import hashlib
import io
import re
import shlex
import tarfile
from collections.abc import Callable, Mapping

from envfactory.core.errors import SandboxFileNotFound
from envfactory.core.models import Purpose
from envfactory.core.models.base import Model
from sandboxes.protocol import SandboxEngine

from .detect import Requirements, UvCommand, detect_requirements

MANIFEST = "/var/lib/envfactory/verification-layer"
LAYER_REPO = "envfactory/verify"
UV_HOME_BIN = "/root/.local/bin"  # where the uv installer puts uv/uvx for HOME=/root
Log = Callable[[str], None]


# -- the verification layer -----------------------------------------------------------


class VerificationLayer(Model):
    """The image verifications start from, and what it does and does not provide."""

    image: str  # the layer's image id (the task image itself when nothing was needed)
    source_image: str  # the task image it was built FROM
    tag: str | None = None
    provided: tuple[str, ...] = ()  # "uv 0.9.5 (PyPI)", "pytest==8.4.1 (pip3)", "apt: curl"
    missing: tuple[str, ...] = ()  # "python 3.13 (not in this image's release)", "network: URL"
    notes: tuple[str, ...] = ()
    cached: bool = False
    build_s: float = 0.0


_UV_STAGE = """\
FROM {base} AS envfactory-uv
RUN mkdir -p /out && cd /tmp && ( python3 -m pip download -q --no-deps --only-binary=:all: \
--dest w {spec} && python3 -m zipfile -e w/uv-*.whl x && install -m 755 \
x/uv-*.data/scripts/uv x/uv-*.data/scripts/uvx /out/ ) || echo {spec} > /out/NOT-ON-PYPI
"""
_LAYER = """\
FROM {image}
{copy_uv}COPY envfactory-layer.sh /opt/envfactory-layer.sh
RUN sh /opt/envfactory-layer.sh && rm -rf /opt/envfactory-layer.sh /opt/envfactory-uv
"""
# What the uv installer writes to $HOME/.local/bin/env (uv 0.9.x), so `source` works.
_UV_ENV_FILE = r"""#!/bin/sh
# add binaries to PATH if they aren't added yet
# affix colons on either side of $PATH to simplify matching
case ":${PATH}:" in
    *:"$HOME/.local/bin":*)
        ;;
    *)
        # Prepending path in case a system-installed binary needs to be overridden
        export PATH="$HOME/.local/bin:$PATH"
        ;;
esac
"""
_HEADER = f"""\
set +e
M={MANIFEST}; mkdir -p "$(dirname "$M")"; : > "$M"
ok() {{ printf 'provided\\t%s\\n' "$1" >> "$M"; }}
miss() {{ printf 'missing\\t%s\\n' "$1" >> "$M"; }}
note() {{ printf 'note\\t%s\\n' "$1" >> "$M"; }}
export DEBIAN_FRONTEND=noninteractive HOME=/root PATH={UV_HOME_BIN}:$PATH
"""


def layer_context(requirements: Requirements, image: str, python_base: str) -> bytes:
    """The build context (Dockerfile + script) of the layer; deterministic, so the
    engine's content cache reuses it for the same image and requirements."""
    uv_stage = ""
    copy_uv = ""
    if requirements.needs_uv:
        uv_stage = _UV_STAGE.format(base=python_base, spec=shlex.quote(_uv_spec(requirements)))
        copy_uv = "COPY --from=envfactory-uv /out/ /opt/envfactory-uv/\n"
    dockerfile = uv_stage + _LAYER.format(image=image, copy_uv=copy_uv)
    return _tar({"Dockerfile": dockerfile, "envfactory-layer.sh": layer_script(requirements)})


def _uv_spec(requirements: Requirements) -> str:
    v = requirements.uv_version
    return f"uv=={v}" if v and re.fullmatch(r"[0-9][0-9A-Za-z.+!-]*", v) else "uv"


def layer_script(r: Requirements) -> str:
    """The shell script that installs everything; each outcome lands in the manifest."""
    parts = [_HEADER, _apt_part(r)]
    if r.needs_uv:
        parts.append(_uv_part(r))
    parts += [_python_part(v) for v in r.pythons]
    parts += [_uv_command_part(c) for c in r.uv_commands]
    parts += [_pip_part(installer, flags, pkgs) for (installer, flags), pkgs in _pip_groups(r)]
    parts += [f"miss {shlex.quote('network: ' + url)}\n" for url in r.urls]
    parts.append(_offline_part(r))
    return "".join(parts)


def _apt_part(r: Requirements) -> str:
    if not (r.apt or r.pythons):
        return ""
    lines = [
        "if command -v apt-get >/dev/null 2>&1; then",
        "  apt-get update -q || note 'apt-get update failed at build time'",
    ]
    if r.apt:
        pkgs = " ".join(shlex.quote(p) for p in r.apt)
        lines += [
            f"  if apt-get install -y -q --no-install-recommends {pkgs}; then",
            *(f"    ok {shlex.quote('apt: ' + p)}" for p in r.apt),
            f'  else for p in {pkgs}; do apt-get install -y -q --no-install-recommends "$p"'
            ' && ok "apt: $p" || miss "apt: $p (not in this image\'s release)"; done; fi',
        ]
    lines.append("else")
    lines += [f"  miss {shlex.quote(f'apt: {p} (the image has no apt-get)')}" for p in r.apt]
    lines.append("  true\nfi\n")
    return "\n".join(lines)


def _uv_part(r: Requirements) -> str:
    missing = shlex.quote(f"{_uv_spec(r)} (not on PyPI)")
    return f"""\
if [ -x /opt/envfactory-uv/uv ]; then
  command -v uv >/dev/null 2>&1 || had_no_uv=1
  mkdir -p {UV_HOME_BIN} && cp /opt/envfactory-uv/uv /opt/envfactory-uv/uvx {UV_HOME_BIN}/
  cat > {UV_HOME_BIN}/env <<'ENVFACTORY_EOF'
{_UV_ENV_FILE}ENVFACTORY_EOF
  {_symlink_uv(r)}
  ok "uv $(uv --version | cut -d' ' -f2) (PyPI)"
else miss {missing}; fi
mkdir -p /etc/uv && printf 'python-downloads = "never"\\n' > /etc/uv/uv.toml
"""


def _symlink_uv(r: Requirements) -> str:
    """Without an installer line the script expects uv on PATH: put it there."""
    if r.uv_installer:
        return ":"
    return (
        f'[ -n "$had_no_uv" ] && ln -sf {UV_HOME_BIN}/uv {UV_HOME_BIN}/uvx /usr/local/bin/ '
        "&& note 'uv linked into /usr/local/bin (the verifier runs it without installing it)'"
    )


def _python_part(version: str) -> str:
    m = re.fullmatch(r"(?:python|cpython[-@]?)?(3\.\d+)(?:\.\d+)?", version)
    apt = f"apt-get install -y -q --no-install-recommends python{m.group(1)}" if m else "false"
    v, named = shlex.quote(version), shlex.quote(f"python {version}")
    lost = shlex.quote(f"python {version} (not in this image's release)")
    return (
        f"if uv python find {v} >/dev/null 2>&1; then ok {named}\n"
        f"elif {apt} && uv python find {v} >/dev/null 2>&1; then ok {shlex.quote(f'python {version} (apt)')}\n"
        f"else miss {lost}; fi\n"
    )


def _uv_command_part(c: UvCommand) -> str:
    cmd = shlex.join(c.argv)
    run = cmd if c.kind == "uv tool install" else f"{cmd} --version || {cmd} --help"
    what = " ".join(
        [c.kind if c.kind != "uvx" else "uvx", c.tool]
        + ([f"-p {c.python}"] if c.python else [])
        + [f"--with {w}" for w in c.with_packages]
    )
    guard = f"uv python find {shlex.quote(c.python)} >/dev/null 2>&1" if c.python else "true"
    return (
        f"if ! {guard}; then miss {shlex.quote(f'{what} (needs python {c.python})')}\n"
        f'elif (cd "$(mktemp -d)" && {{ {run}; }}); then ok {shlex.quote(what + " (cached)")}\n'
        f"else miss {shlex.quote(what + ' (the pre-run failed; see the build log)')}; fi\n"
    )


def _pip_groups(r: Requirements) -> list[tuple[tuple[tuple[str, ...], tuple[str, ...]], list[str]]]:
    groups: dict[tuple[tuple[str, ...], tuple[str, ...]], list[str]] = {}
    for p in r.pip:
        groups.setdefault((p.installer, p.flags), []).extend(p.packages)
    return list(groups.items())


def _pip_part(installer: tuple[str, ...], flags: tuple[str, ...], pkgs: list[str]) -> str:
    inst = shlex.join([*installer, "install", *flags])
    if installer == ("uv", "pip") and not {"--system", "--python", "-p", "--target"} & set(flags):
        # Into a project venv at run time: warm uv's cache in a scratch venv.
        inst = f'cd "$(mktemp -d)" && uv venv -q && {inst}'
    label = " ".join(installer)
    quoted = " ".join(shlex.quote(p) for p in pkgs)
    return (
        f"if ! command -v {shlex.quote(installer[0])} >/dev/null 2>&1; then "
        f'for p in {quoted}; do miss "$p ({installer[0]} is not in the image)"; done\n'
        f'elif ({inst} {quoted}); then for p in {quoted}; do ok "$p ({label})"; done\n'
        f'else for p in {quoted}; do ({inst} "$p") && ok "$p ({label})" || '
        f'miss "$p (not installable by {label})"; done; fi\n'
    )


def _offline_part(r: Requirements) -> str:
    lines = []
    if r.needs_uv:
        lines.append("printf 'offline = true\\n' >> /etc/uv/uv.toml")
    if r.apt or r.pythons:
        # Offline, apt's default 3 retries with back-off turn `apt-get update` into ~9 s,
        # and parsing 80 MB of package lists costs ~30 s on a busy overlay filesystem;
        # without lists, `apt-get install` of an installed package still exits 0. The
        # lists/partial directory stays: apt cannot re-create it with capabilities dropped.
        lines.append(
            "[ -d /etc/apt/apt.conf.d ] && echo 'Acquire::Retries \"0\";' > "
            "/etc/apt/apt.conf.d/99envfactory-offline"
        )
        lines.append("find /var/lib/apt/lists -maxdepth 1 -type f -delete; apt-get clean")
    return "\n".join(lines) + "\nexit 0\n"


def _tar(members: dict[str, str]) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for name, text in sorted(members.items()):
            data = text.encode()
            info = tarfile.TarInfo(name)
            info.size, info.mode = len(data), 0o644
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def ensure_verification_layer(
    engine: SandboxEngine, image: str, requirements: Requirements, *, log: Log | None = None
) -> VerificationLayer:
    """The verification image for `image` and `requirements`: built once (with build
    network), reused while both are unchanged. Never start a solver sandbox from it.

    Pass the task image's id (`BuildResult.image`): the layer's cache key holds the
    reference as given, so a tag that later names another image would reuse a stale layer."""
    if requirements.empty:
        return VerificationLayer(image=image, source_image=image, notes=requirements.notes)
    base = engine.ensure_base_image("python") if requirements.needs_uv else ""
    context = layer_context(requirements, image, base)
    tag = f"{LAYER_REPO}:{hashlib.sha256(context).hexdigest()[:16]}"
    # Our own Dockerfile, FROM the task image by id: the untrusted-FROM rule is for theirs.
    built = engine.build(context, tag=tag, on_log=log, trusted=True)
    provided, missing, notes = _read_manifest(engine, built.image)
    return VerificationLayer(
        image=built.image,
        source_image=image,
        tag=tag,
        provided=provided,
        missing=missing,
        notes=(*requirements.notes, *notes),
        cached=built.cached,
        build_s=built.duration_s,
    )


def _read_manifest(
    engine: SandboxEngine, image: str
) -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]:
    """What the build script recorded: (provided, missing, notes)."""
    box = engine.start(image, purpose=Purpose.VERIFY_DEPS, network=False)
    try:
        text = box.read_file(MANIFEST).decode(errors="replace")
    except SandboxFileNotFound:
        text = "note\tthe layer wrote no manifest (its script did not run to the end)\n"
    finally:
        box.remove()
    out: dict[str, list[str]] = {"provided": [], "missing": [], "note": []}
    for line in text.splitlines():
        kind, _, what = line.partition("\t")
        if kind in out and what not in out[kind]:
            out[kind].append(what)
    return tuple(out["provided"]), tuple(out["missing"]), tuple(out["note"])


def verification_image(
    engine: SandboxEngine, image: str, files: Mapping[str, bytes], *, log: Log | None = None
) -> VerificationLayer:
    """For the runner and gates: detect what the verifier `files` need and return the
    layer to start verification containers from (`.image`; the task image when the
    verifier needs nothing)."""
    return ensure_verification_layer(engine, image, detect_requirements(files), log=log)
