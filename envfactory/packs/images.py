"""Moving environment images in and out of packs: `docker save` / `docker load`.

The sandbox protocol builds and runs images but does not move them; this is the one
place packs talk to the Docker engine's image store directly. Archives are streamed to
and from disk, never held in memory (an image is hundreds of MB).

A pack is untrusted, and `docker load` writes whatever tags its archive names: a pack
claiming `envfactory/verify:…`, a base image or another environment's tag would repoint
it. So an archive is read before it is loaded (`read_archive`: its headers and its two
small JSON members, never its layers), and loading:
- refuses an archive that holds other than one image, has no `manifest.json` (a legacy
  archive, whose `repositories` file docker would obey) or names any tag at all (a
  pack chooses no names: envfactory's exports are saved by id), naming the tag;
- refuses an image whose id (the sha256 of its config) is not the one the pack's
  manifest recorded, before anything is loaded;
- writes one tag, in a namespace envfactory derives: the pack's content id (checked
  against its members when pack.json is read, `manifest.parse_manifest`) and a hash of
  the environment id (`pack_tag`); a tag that already names another image is never
  moved: the import is refused before anything is loaded (`check_tag_free`).
Exported archives carry no tags at all (saved by id), so a pack's content, and hence its
id, does not depend on the exporter's local names.
"""

from __future__ import annotations

import hashlib
import json
import tarfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from envfactory.core.errors import InvalidPack, SandboxError

NAMESPACE = "envfactory/"
MAX_JSON_BYTES = 4 * 1024 * 1024  # manifest.json and an image config are a few KiB


def pack_repository(pack_id: str) -> str:
    """The repository a pack's images are tagged in: `envfactory/<pack id>` (the content
    id: `manifest.parse_manifest` refuses a pack.json whose id is not derived from its
    members)."""
    return f"{NAMESPACE}{pack_id}"


def pack_tag(pack_id: str, env_id: str) -> str:
    """The one tag an imported environment image gets: pack id and environment hash."""
    return f"{pack_repository(pack_id)}:{hashlib.sha256(env_id.encode()).hexdigest()[:16]}"


@dataclass(frozen=True)
class ArchiveImage:
    """What a `docker save` archive would load: one image id and the tags it names."""

    image_id: str
    tags: tuple[str, ...]


def _json_member(tar: tarfile.TarFile, members: dict[str, tarfile.TarInfo], name: str) -> Any:
    info = members.get(name)
    if info is None or not info.isfile():
        raise InvalidPack(f"the image archive has no {name}")
    if info.size > MAX_JSON_BYTES:
        raise InvalidPack(f"the image archive's {name} is {info.size} bytes, more than a config")
    f = tar.extractfile(info)
    if f is None:
        raise InvalidPack(f"the image archive's {name} cannot be read")
    with f:
        data = f.read()
    try:
        return json.loads(data)
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise InvalidPack(f"the image archive's {name} is not JSON ({e})") from e


def _legacy_tags(tar: tarfile.TarFile, members: dict[str, tarfile.TarInfo]) -> list[str]:
    """Tags named by a `repositories` file (`{repo: {tag: layer}}`)."""
    if "repositories" not in members:
        return []
    repos = _json_member(tar, members, "repositories")
    if not isinstance(repos, dict) or not all(isinstance(t, dict) for t in repos.values()):
        raise InvalidPack("the image archive's repositories file is malformed")
    return [f"{repo}:{tag}" for repo, tags in repos.items() for tag in tags]


def _members(tar: tarfile.TarFile) -> dict[str, tarfile.TarInfo]:
    """The archive's members by name; a name held twice is refused (which copy a reader
    takes is its own choice: ours and the engine's must not differ)."""
    members: dict[str, tarfile.TarInfo] = {}
    for m in tar.getmembers():
        name = m.name.removeprefix("./").rstrip("/")
        if name in members:
            raise InvalidPack(f"the image archive holds {name} twice")
        members[name] = m
    return members


def read_archive(src: Path) -> ArchiveImage:
    """The image a `docker save` archive holds, read without loading it."""
    try:
        with tarfile.open(src, "r:") as tar:
            members = _members(tar)
            manifest = _json_member(tar, members, "manifest.json")
            if not isinstance(manifest, list) or len(manifest) != 1:
                count = len(manifest) if isinstance(manifest, list) else "no list of"
                raise InvalidPack(f"the image archive holds {count} images; a pack holds one")
            entry = manifest[0]
            config = entry.get("Config") if isinstance(entry, dict) else None
            if not isinstance(config, str):
                raise InvalidPack("the image archive's manifest.json names no image config")
            tags = entry.get("RepoTags") or []
            if not isinstance(tags, list) or not all(isinstance(t, str) for t in tags):
                raise InvalidPack("the image archive's RepoTags is not a list of names")
            info = members.get(config)
            if info is None or not info.isfile() or info.size > MAX_JSON_BYTES:
                raise InvalidPack(f"the image archive's config {config} is missing or too big")
            f = tar.extractfile(info)
            if f is None:
                raise InvalidPack(f"the image archive's config {config} cannot be read")
            with f:
                digest = hashlib.sha256(f.read()).hexdigest()
            legacy = _legacy_tags(tar, members)
    except (OSError, tarfile.TarError) as e:
        raise InvalidPack(f"{src}: not a docker image archive ({e})") from e
    return ArchiveImage(image_id=f"sha256:{digest}", tags=tuple(tags + legacy))


def check_archive(found: ArchiveImage, *, pack_id: str, image_id: str | None) -> None:
    """Refuse an archive that would write any tag (envfactory names a pack's images, the
    pack does not), or whose image is not the one the pack's manifest recorded."""
    if found.tags:
        raise InvalidPack(
            f"the image archive would tag {', '.join(sorted(found.tags))}: a pack's image "
            f"names no tags (envfactory tags it {pack_repository(pack_id)}:…)",
            hint="a pack's image must not name or repoint local images; re-export it with "
            "envfactory pack export --images save",
        )
    if image_id is None or not image_id.startswith("sha256:"):
        raise InvalidPack(
            "the pack's manifest records no image id for its image archive",
            hint="re-export the pack with envfactory pack export --images save",
        )
    if found.image_id != image_id:
        raise InvalidPack(
            f"the image archive holds {found.image_id}, but the pack's manifest recorded {image_id}"
        )


def check_tag_free(tag: str, current: str | None, image_id: str) -> None:
    """Refuse to move `tag`, which names the image `current` (None: no image), to
    `image_id`: an import never repoints a tag."""
    if current is not None and current != image_id:
        raise InvalidPack(
            f"tag {tag} already names image {current}, not this pack's {image_id}: an "
            "import never moves a tag",
            hint=f"remove the local tag if it is stale (docker rmi {tag}) and import again",
        )


class ImageIO(Protocol):
    def save_image(self, image: str, dest: Path) -> str:
        """Write `docker save` output for `image` (untagged) to `dest`; return its id."""
        ...

    def load_image(self, src: Path, *, pack_id: str, env_id: str, image_id: str | None) -> str:
        """Load a pack's image archive (checked as `check_archive` does), tag it
        `pack_tag(pack_id, env_id)`, and return the image id."""
        ...


class DockerImages:
    """`ImageIO` over a docker SDK client (the engine's own, when it has one)."""

    def __init__(self, client: Any = None) -> None:
        self._client = client

    @classmethod
    def from_engine(cls, engine: object) -> DockerImages:
        """Share the engine's client when it has one; otherwise connect on first use."""
        return cls(getattr(engine, "client", None))

    @property
    def client(self) -> Any:
        if self._client is None:
            import docker

            self._client = docker.from_env(timeout=900)
        return self._client

    def save_image(self, image: str, dest: Path) -> str:
        import docker.errors

        try:
            img = self.client.images.get(image)
            with open(dest, "wb") as f:
                for chunk in img.save(named=False):
                    f.write(chunk)
        except docker.errors.ImageNotFound as e:
            raise SandboxError(f"image {image} is not in the local engine; rebuild it") from e
        except docker.errors.APIError as e:
            raise SandboxError(f"docker save {image} failed: {e}") from e
        return str(img.id)

    def load_image(self, src: Path, *, pack_id: str, env_id: str, image_id: str | None) -> str:
        import docker.errors

        found = read_archive(src)
        check_archive(found, pack_id=pack_id, image_id=image_id)
        target = pack_tag(pack_id, env_id)
        check_tag_free(target, self._image_of(target), found.image_id)
        try:
            with open(src, "rb") as f:
                loaded = self.client.images.load(f)
        except docker.errors.APIError as e:
            raise InvalidPack(f"{src}: docker could not load this image archive ({e})") from e
        ids = {str(img.id) for img in loaded}
        if ids != {found.image_id}:
            raise InvalidPack(f"{src}: docker loaded {sorted(ids)}, not {found.image_id}")
        repository, tag = target.split(":", 1)
        loaded[0].tag(repository, tag)
        return found.image_id

    def _image_of(self, tag: str) -> str | None:
        """The id of the image `tag` names, or None when it names none."""
        import docker.errors

        try:
            return str(self.client.images.get(tag).id)
        except docker.errors.ImageNotFound:
            return None
        except docker.errors.APIError as e:
            raise SandboxError(f"docker could not look up {tag}: {e}") from e
