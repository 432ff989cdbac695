"""What an eval runs on: a seed read from a directory, or a stored environment.

Seeds are read and validated exactly as `seed submit` reads them (`envfactory.seeds`);
their attachments go into the artifact store (content-addressed, so re-runs add nothing),
never into the seeds table: an eval leaves the pipeline's rows alone.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from envfactory.core.errors import InvalidSeed, NotFound
from envfactory.core.models import Attachment, EnvironmentSpec, TaskSeed, Verifier
from envfactory.core.settings import SeedLimits
from envfactory.seeds import load_seed
from envfactory.store import ArtifactStore, EnvironmentRecord, Store


@dataclass(frozen=True)
class Target:
    name: str  # the seed's directory name, or the environment id
    seed: TaskSeed | None = None
    spec: EnvironmentSpec | None = None  # with a built image
    verifier: Verifier | None = None


def seed_dirs(root: Path) -> list[Path]:
    """`root` itself when it holds a seed, else its sub-directories that do, sorted."""
    if (root / "seed.yaml").is_file() or (root / "seed.yml").is_file():
        return [root]
    if not root.is_dir():
        raise InvalidSeed(str(root), "is not a directory", hint="pass --seeds DIR")
    found = sorted(p for p in root.iterdir() if (p / "seed.yaml").is_file())
    if not found:
        raise InvalidSeed(
            str(root),
            "holds no seed (DIR/seed.yaml or DIR/<name>/seed.yaml)",
            hint="pass a directory of seed directories, e.g. examples/seeds",
        )
    return found


def seed_targets(root: Path, limits: SeedLimits, artifacts: ArtifactStore) -> list[Target]:
    """Every seed under `root`, validated (InvalidSeed names the file), attachments stored."""
    out = []
    for path in seed_dirs(root):
        draft = load_seed(path, limits)
        f = draft.fields
        seed = TaskSeed(
            id=draft.seed_id,
            title=f.title,
            description=f.description,
            domain=f.domain,
            attachments=tuple(
                Attachment(path=a.path, key=artifacts.put_bytes(a.data), size=len(a.data))
                for a in draft.files
            ),
            repository=f.repository,
            constraints=f.constraints,
            source=f.source,
            content_hash=draft.content_hash,
        )
        out.append(Target(name=path.name, seed=seed))
    return out


def stored_targets(store: Store, env_ids: list[str], seeds: list[Target]) -> list[Target]:
    """Stored environments: the ids given, plus the latest environment made from each seed.
    Each needs a built image (NotFound names what is missing); its verifier, if any."""
    records = [store.environments.record(e) for e in env_ids]
    for t in seeds:
        assert t.seed is not None
        made = [r for r in _by_hash(store, t.seed.content_hash) if r.spec.image]
        if not made:
            raise NotFound(
                f"no built environment in the store for seed {t.name} ({t.seed.title!r})",
                hint="run the seed through the pipeline first (`envfactory seed submit`), "
                "or pass --env ID",
            )
        records.append(max(made, key=lambda r: r.updated_at))
    return [_stored(store, r) for r in records]


def _by_hash(store: Store, content_hash: str) -> list[EnvironmentRecord]:
    seed = store.seeds.find_by_hash(content_hash)
    return [] if seed is None else store.environments.list(seed_id=seed.id)


def _stored(store: Store, rec: EnvironmentRecord) -> Target:
    spec = rec.spec
    if not spec.image:
        raise NotFound(f"environment {spec.id} has no built image", hint="build it first")
    seed = store.seeds.get(spec.seed_id) if spec.seed_id else None
    try:
        verifier: Verifier | None = store.verifiers.get(spec.id)
    except NotFound:  # the verifier writer needs none; judge and red team fail setup
        verifier = None
    return Target(name=spec.id, seed=seed, spec=spec, verifier=verifier)
