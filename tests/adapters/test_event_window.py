"""An adapter's window on its server's round events keeps positions absolute when the events judged are
forgotten, also across a re-read of the whole log (a restarted server's)."""

from __future__ import annotations

import pytest

from harness.bench.adapters.event_window import RoundEventWindow
from harness.records import RoundEvent, RoundEventKind


def _events(n: int) -> list[RoundEvent]:
    kinds = (RoundEventKind.OPENED, RoundEventKind.SETTLED)
    return [RoundEvent(str(i // 2 + 1), kinds[i % 2], float(i)) for i in range(n)]


def test_positions_stay_absolute_after_forget_and_reread() -> None:
    log = _events(40)
    window = RoundEventWindow()
    for event in log[:30]:
        window.append(event)
    window.forget(12)
    assert (window.start, window.end) == (12, 30)
    assert window.held() == log[12:30] and window.since(20) == log[20:30] and window.since(30) == []
    with pytest.raises(ValueError, match="round event 11 was forgotten: the events held start at 12"):
        window.since(11)
    window.forget(5)  # already forgotten: nothing
    assert window.start == 12
    window.reread(log)  # the server's whole log again, after its restart
    assert (window.start, window.end) == (12, 40) and window.since(30) == log[30:]
    window.forget(10**6)  # clamped to the end
    assert (window.start, window.end, window.held()) == (40, 40, [])
