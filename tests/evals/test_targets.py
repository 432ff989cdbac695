"""Eval targets: seeds read as `seed submit` reads them (attachments into the artifact
store, no rows), and stored environments found by id or by the seed they were made from."""

from __future__ import annotations

import pytest
from eval_replies import write_seed

from envfactory.core.errors import InvalidSeed, NotFound
from envfactory.core.models import (
    BuildContext,
    EnvironmentSpec,
    EnvStatus,
    FileEntry,
    Provenance,
    Step,
    Verifier,
)
from envfactory.core.settings import SeedLimits
from envfactory.evals import seed_targets, stored_targets
from envfactory.store import ArtifactStore


def _spec(env_id: str, seed_id: str, image: str | None, key: str) -> EnvironmentSpec:
    return EnvironmentSpec(
        id=env_id,
        name="answer-file",
        seed_id=seed_id,
        instruction="Write the answer into answer.txt.",
        build=BuildContext(files=(FileEntry(path="Dockerfile", key=key),)),
        reference_solution=(Step(script="echo 42 > answer.txt"),),
        image=image,
    )


def test_seed_targets_store_attachments_and_name_targets_by_directory(tmp_path):
    artifacts = ArtifactStore(tmp_path / "artifacts")
    d = write_seed(tmp_path / "seeds", "alpha", "Eval seed alpha")
    (d / "notes.txt").write_text("hello\n")
    with (d / "seed.yaml").open("a") as f:
        f.write("attachments:\n  - notes.txt\n")
    write_seed(tmp_path / "seeds", "beta", "Eval seed beta")
    alpha, beta = seed_targets(tmp_path / "seeds", SeedLimits(), artifacts)
    assert (alpha.name, beta.name) == ("alpha", "beta")
    (att,) = alpha.seed.attachments
    assert artifacts.get(att.key) == b"hello\n" and att.path == "notes.txt"
    assert [t.name for t in seed_targets(d, SeedLimits(), artifacts)] == ["alpha"]
    with pytest.raises(InvalidSeed, match="holds no seed"):
        seed_targets(tmp_path / "artifacts", SeedLimits(), artifacts)


def test_stored_targets_take_the_latest_built_environment_of_each_seed(tmp_path, store):
    artifacts = ArtifactStore(tmp_path / "artifacts")
    write_seed(tmp_path / "seeds", "alpha", "Eval seed alpha")
    (target,) = seed_targets(tmp_path / "seeds", SeedLimits(), artifacts)
    with pytest.raises(NotFound, match="no built environment in the store for seed alpha"):
        stored_targets(store, [], [target])
    key = artifacts.put_bytes(b"FROM python:3.11-slim\n")
    store.seeds.add(target.seed)
    store.environments.add(_spec("env-unbuilt", target.seed.id, None, key), EnvStatus.DRAFT)
    store.environments.add(_spec("env-built", target.seed.id, "img:1", key), EnvStatus.PUBLISHED)
    verifier = Verifier(
        env_id="env-built",
        files=(FileEntry(path="check.sh", key=key),),
        entry="/bin/bash check.sh",
        provenance=Provenance(author="human:test"),
    )
    store.verifiers.add(verifier)
    (found,) = stored_targets(store, [], [target])
    assert (found.name, found.spec.image, found.verifier) == ("env-built", "img:1", verifier)
    assert found.seed == target.seed
    with pytest.raises(NotFound, match="env-unbuilt has no built image"):
        stored_targets(store, ["env-unbuilt"], [])
    store.environments.add(_spec("env-2", target.seed.id, "img:2", key), EnvStatus.BUILT)
    (bare,) = stored_targets(store, ["env-2"], [])
    assert bare.verifier is None  # the verifier writer needs none; a judge fails setup
