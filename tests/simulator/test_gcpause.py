"""``gc_paused``: the collector's state is restored; what a long pause allocated leaves the youngest generation (so
the first collection after it does not scan it all); objects someone else froze stay frozen."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from simulator.gcpause import gc_paused


@pytest.fixture
def collector() -> Iterator[None]:
    was = gc.isenabled()
    gc.collect()
    yield
    gc.unfreeze()
    (gc.enable if was else gc.disable)()


@pytest.mark.parametrize("enabled", [True, False])
def test_the_collector_is_paused_inside_and_as_it_was_after(collector: None, enabled: bool) -> None:
    (gc.enable if enabled else gc.disable)()
    with gc_paused():
        assert not gc.isenabled()
    assert gc.isenabled() is enabled


def test_what_a_long_pause_allocated_leaves_the_youngest_generation(collector: None) -> None:
    gc.enable()
    threshold = gc.get_threshold()[0]
    with gc_paused():
        kept = [[i] for i in range(20 * threshold)]
        assert gc.get_count()[0] > 10 * threshold
    assert gc.get_count()[0] < threshold
    assert len(kept) == 20 * threshold


@pytest.mark.parametrize("allocated", [10, 20_000])
def test_objects_someone_else_froze_stay_frozen(collector: None, allocated: int) -> None:
    gc.enable()
    frozen = [[i] for i in range(1_000)]
    gc.freeze()
    before = gc.get_freeze_count()
    with gc_paused():
        kept = [[i] for i in range(allocated)]
    assert gc.get_freeze_count() == before and len(frozen) == 1_000 and len(kept) == allocated
