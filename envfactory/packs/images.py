"""Moving environment images in and out of packs: `docker save` / `docker load`.

The sandbox protocol builds and runs images but does not move them; this is the one
place packs talk to the Docker engine's image store directly. Archives are streamed to
and from disk, never held in memory (an image is hundreds of MB).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Protocol

from envfactory.core.errors import InvalidPack, SandboxError


class ImageIO(Protocol):
    def save_image(self, image: str, dest: Path) -> None: ...

    def load_image(self, src: Path) -> str:
        """Load a `docker save` archive; return the image id."""
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

    def save_image(self, image: str, dest: Path) -> None:
        import docker.errors

        try:
            img = self.client.images.get(image)
            with open(dest, "wb") as f:
                for chunk in img.save(named=True):
                    f.write(chunk)
        except docker.errors.ImageNotFound as e:
            raise SandboxError(f"image {image} is not in the local engine; rebuild it") from e
        except docker.errors.APIError as e:
            raise SandboxError(f"docker save {image} failed: {e}") from e

    def load_image(self, src: Path) -> str:
        import docker.errors

        try:
            with open(src, "rb") as f:
                loaded = self.client.images.load(f)
        except docker.errors.APIError as e:
            raise InvalidPack(f"{src}: docker could not load this image archive ({e})") from e
        if not loaded:
            raise InvalidPack(f"{src}: the image archive held no image")
        return str(loaded[0].id)
