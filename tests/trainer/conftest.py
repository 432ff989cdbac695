"""Trainer tests: skipped as a whole where torch (the ``trainer`` extra) is absent."""

import pytest

torch = pytest.importorskip("torch")


@pytest.fixture(autouse=True)
def _one_torch_thread():
    # tiny models are dominated by per-op overhead; one thread avoids fighting the
    # rollout thread (and other test runs) for the machine's cores
    previous = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(previous)
