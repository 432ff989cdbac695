"""`Images`: the images a `DockerEngine` starts sandboxes from, made without a registry.

Base images come from `base_image.py` (one per flavour and Debian release, tagged by
their recipe hash); environment images are built from a tar'd context by `builds.py`,
with BuildKit-only syntax translated for the classic builder (`dockerfile_classic.py`) and
the FROM lines naming public images rewritten to local stand-ins first.

Invariants:
- `settings.base_image` wins over every local base build; the user's `from_map` wins over
  the built-in stand-ins, and neither carries a warning (they are the user's choice);
- a base image is asked of `base_image.py` once per flavour and release per engine;
- an environment image is tagged `envfactory/env:<content hash>` of its context after
  the FROM rewrite, and a context whose tag exists is not built again (`cached`);
- builds carry the environment labels of the engine's run (`builds.env_labels`).
"""

from __future__ import annotations

import contextlib
import dataclasses
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import docker
import docker.errors

from envfactory.core.errors import ConfigError, ImageBuildFailed
from envfactory.core.models import BuildResult
from envfactory.core.settings import SandboxSettings

from . import base_image as B
from . import builds as BL
from .dockerfile_classic import to_classic
from .dockerfile_policy import check_untrusted
from .log_tail import LogTail

Log = Callable[[str], None]


@dataclass(frozen=True)
class Substitute:
    """A local image for a public FROM reference; `warning` when the release differs."""

    image: str
    warning: str | None = None


def _collect(
    substitute: Callable[[str], Substitute | None], warnings: list[str]
) -> Callable[[str], str | None]:
    """`substitute` as the plain resolver `rewrite_from_lines` takes, keeping the warnings."""

    def resolve(ref: str) -> str | None:
        sub = substitute(ref)
        if sub and sub.warning and sub.warning not in warnings:
            warnings.append(sub.warning)
        return sub.image if sub else None

    return resolve


class Images:
    """Base images, FROM substitution and cached builds on one Docker engine."""

    def __init__(
        self,
        client: docker.DockerClient,
        settings: SandboxSettings,
        *,
        recipe: B.BaseRecipe | None = None,
    ) -> None:
        self.client = client
        self.settings = settings
        self._recipe = recipe
        self._base_cache: dict[str, str] = {}

    def ensure_base_image(
        self, flavour: str = "python", *, release: str | None = None, log: Log | None = None
    ) -> str:
        """The base image for a flavour on a Debian release (default: the recipe's suite,
        bookworm); `settings.base_image` wins over the local build."""
        if self.settings.base_image:
            return self.settings.base_image
        key = f"{flavour}@{release or ''}"
        if key not in self._base_cache:
            recipe = self._recipe_for(release)
            self._base_cache[key] = B.ensure_base_image(
                self.client, flavour, recipe=recipe, log=log or (lambda _: None)
            )
        return self._base_cache[key]

    def _recipe_for(self, release: str | None) -> B.BaseRecipe:
        recipe = self._recipe or B.BaseRecipe.from_host()
        if release is None or release == recipe.suite:
            return recipe
        if release not in BL.RELEASES:
            raise ConfigError(
                f"unknown Debian release {release!r}", hint=f"choose one of {sorted(BL.RELEASES)}"
            )
        # The host's mirror serves every release (find_mirror falls back to it).
        return dataclasses.replace(recipe, suite=release)

    def substitute(self, ref: str) -> Substitute | None:
        """The local image standing in for a public FROM reference (None: keep it), with a
        warning when it is not the release the reference names. `from_map` and
        `base_image` are the user's choice: they win and carry no warning."""
        custom = BL.match_map(ref, self.settings.from_map)
        if custom:
            return Substitute(custom)
        standin = BL.match_map(ref, BL.BUILTIN_MAP) if self.settings.map_public_images else None
        if standin is None:
            return None
        image = self.ensure_base_image(standin.flavour, release=standin.release)
        warning = None if self.settings.base_image else standin.warning(ref, image)
        return Substitute(image, warning)

    def resolve_from(self, ref: str) -> str | None:
        """The local image standing in for a public FROM reference, or None to keep it."""
        sub = self.substitute(ref)
        return sub.image if sub else None

    def build(
        self,
        context_tar: bytes,
        *,
        dockerfile: str = "Dockerfile",
        tag: str | None = None,
        on_log: Log | None = None,
        run_id: str | None = None,
        network: bool | None = None,
        trusted: bool = False,
    ) -> BuildResult:
        """Build from a tar'd context; cached by content hash (`envfactory/env:<hash>`),
        labelled with `run_id`; `network` None: the `build_network` setting. Unless
        `trusted` (a Dockerfile envfactory wrote itself), the Dockerfile may make the
        daemon fetch nothing (`dockerfile_policy.check_untrusted`)."""
        started = time.monotonic()
        warnings: list[str] = []
        ctx, subs = self._for_classic_builder(
            BL.Context.from_tar(context_tar), dockerfile, warnings, trusted=trusted
        )
        chash = ctx.content_hash(dockerfile)
        env_tag = f"{BL.ENV_REPO}:{chash[:24]}"
        cached = B.image_exists(self.client, env_tag)
        log = LogTail()
        if cached:
            log.append(f"cached: {env_tag}\n")
        else:
            out = BL.run_build(
                self.client,
                ctx.to_tar(),
                tag=env_tag,
                dockerfile=dockerfile,
                labels=BL.env_labels(chash, run_id),
                network=self.settings.build_network if network is None else network,
                timeout_s=self.settings.build_timeout_s,
                on_log=on_log,
            )
            log = out.log
        image = self.client.images.get(env_tag)
        if tag and tag != env_tag:
            repo, _, t = tag.rpartition(":") if ":" in tag.split("/")[-1] else (tag, "", "latest")
            image.tag(repo, t)
        return BuildResult(
            image=BL.id_of(image, env_tag),
            tag=tag or env_tag,
            context_hash=chash,
            cached=cached,
            substitutions=subs,
            warnings=tuple(warnings),
            duration_s=round(time.monotonic() - started, 3),
            workdir=(image.attrs.get("Config") or {}).get("WorkingDir") or "/",
            log_tail=log.text(BL.LOG_TAIL_BYTES),
            log_bytes=log.total_bytes,
            log_lines=log.total_lines,
        )

    def _for_classic_builder(
        self, ctx: BL.Context, dockerfile: str, warnings: list[str], *, trusted: bool = False
    ) -> tuple[BL.Context, tuple[str, ...]]:
        """The context as the classic builder builds it: BuildKit-only syntax translated
        (with the files that adds), public FROM images substituted; the substitutions."""
        text = ctx.read(dockerfile)
        if text is None:
            raise ImageBuildFailed(
                f"the build context has no {dockerfile}",
                hint="put a Dockerfile at the root of the context or pass dockerfile=",
            )
        source = text.decode()
        if not trusted:
            check_untrusted(source, self.is_base_or_standin, where=dockerfile)
        classic = to_classic(source, ctx.names(), where=dockerfile)
        for extra in classic.files:
            ctx = ctx.add(extra.path, extra.data, extra.mode)
        rewritten, subs = BL.rewrite_from_lines(classic.text, _collect(self.substitute, warnings))
        if rewritten != source:
            ctx = ctx.replace(dockerfile, rewritten.encode())
        return ctx, subs

    def is_base_or_standin(self, ref: str) -> bool:
        """May an untrusted Dockerfile start FROM `ref`? Yes for a public image the FROM
        substitution maps to a local image, the `base_image` setting, and the local base
        images (`envfactory/base:<recipe>`, `envfactory/base-python:<digest>`; nothing
        imported can be tagged there)."""
        if ref == self.settings.base_image or self.substitute(BL.normalise_ref(ref)):
            return True
        local = ref.startswith((f"{B.BASE_REPO}:", f"{B.PYTHON_REPO}:"))
        return local and B.image_exists(self.client, ref)

    def build_dir(
        self,
        path: Path,
        *,
        dockerfile: str = "Dockerfile",
        tag: str | None = None,
        on_log: Log | None = None,
        run_id: str | None = None,
    ) -> BuildResult:
        path = Path(path)
        if not (path / dockerfile).is_file():
            raise ImageBuildFailed(
                f"{path / dockerfile} does not exist",
                hint="point build_dir at a directory holding a Dockerfile",
            )
        return self.build(
            tar_dir(path), dockerfile=dockerfile, tag=tag, on_log=on_log, run_id=run_id
        )

    def remove_image(self, image: str) -> None:
        with contextlib.suppress(docker.errors.ImageNotFound):
            self.client.images.remove(image, force=True)


def tar_dir(path: Path) -> bytes:
    """A host directory as an uncompressed tar with paths relative to it."""
    import io
    import tarfile

    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for child in sorted(Path(path).iterdir()):
            tar.add(child, arcname=child.name)
    return buf.getvalue()
