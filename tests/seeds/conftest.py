"""Seed fixtures: a valid seed directory to start from, and limits small enough to hit."""

from __future__ import annotations

from pathlib import Path

import pytest

from envfactory.core.settings import SeedLimits

GOOD_YAML = """\
title: Nightly ETL drops rows after a schema change
description: |
  The partner changed the export format; the job keeps 0 rows and exits 0.
domain: data-engineering
constraints:
  max_turns: 40
  time_budget_s: 900
  base_image: python
attachments:
  - job.py
  - data
"""

#: agent settings with a model configured, so a seed nobody scripted may start (nothing is
#: sent to this address unless a pipeline runs; port 9 on loopback refuses at once)
MODEL_ENV = {
    "ENVFACTORY_AGENTS__DEFAULT__BACKEND": "openai",
    "ENVFACTORY_AGENTS__DEFAULT__MODEL": "test-model",
    "ENVFACTORY_AGENTS__DEFAULT__BASE_URL": "http://127.0.0.1:9/v1",
}


@pytest.fixture
def limits() -> SeedLimits:
    return SeedLimits(max_attachments=4, max_attachment_bytes=2_000, max_total_bytes=5_000)


@pytest.fixture
def seed_dir(tmp_path: Path) -> Path:
    d = tmp_path / "seed"
    (d / "data").mkdir(parents=True)
    (d / "seed.yaml").write_text(GOOD_YAML)
    (d / "job.py").write_text("print('etl')\n")
    (d / "data" / "orders.csv").write_text("id;amount\n1;2,50\n")
    return d
