import threading

import pytest

from envfactory.trainer.buffer import BufferClosed, TrajectoryBuffer

from .helpers import trajectory


def test_a_finished_trajectory_is_available_to_the_trainer_at_once():
    buffer = TrajectoryBuffer(capacity=4, max_staleness=2)
    t = trajectory(version=0)
    buffer.put((t,))
    assert buffer.take(1, trainer_version=0) == [t]


def test_trajectories_beyond_the_staleness_cap_are_dropped_and_counted():
    buffer = TrajectoryBuffer(capacity=8, max_staleness=2)
    old, edge, fresh = trajectory(0), trajectory(3), trajectory(5)
    for t in (old, edge, fresh):
        buffer.put((t,))
    assert buffer.take(2, trainer_version=5) == [edge, fresh]
    assert buffer.dropped_stale == 1


def test_groups_are_handed_out_whole():
    buffer = TrajectoryBuffer(capacity=8, max_staleness=0)
    group = tuple(trajectory(1, prompt="g") for _ in range(4))
    buffer.put(group)
    assert buffer.take(4, trainer_version=1) == list(group)


def test_closing_wakes_a_waiting_trainer():
    buffer = TrajectoryBuffer(capacity=2, max_staleness=1)
    errors = []

    def wait():
        try:
            buffer.take(1, 0)
        except BufferClosed as err:
            errors.append(err)

    waiter = threading.Thread(target=wait)
    waiter.start()
    buffer.close()
    waiter.join(timeout=30)
    assert len(errors) == 1
    with pytest.raises(BufferClosed):
        buffer.put((trajectory(0),))
