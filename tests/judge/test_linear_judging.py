"""The judge's indexed answers agree with the rules as first written (scans of everything)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from harness.judge.bench_rules import first_resumes, resumed_before
from harness.judge.timeline import CLOCK_EPSILON_S, Pauses

_times = st.floats(min_value=0.0, max_value=50.0, allow_nan=False)
_span = st.tuples(_times, st.none() | _times)
_pauses = st.dictionaries(st.sampled_from(["1", "2", "3", "4"]), st.lists(_span, min_size=1, max_size=3), max_size=4)


def _scan(pauses: dict[str, Pauses], rid: str, t: float) -> bool:
    return any(
        other != rid and any(r is not None and r <= t + CLOCK_EPSILON_S for _, r in span.spans)
        for other, span in pauses.items()
    )


@given(_pauses, st.sampled_from(["1", "2", "3", "4", "5"]), _times)
def test_resumed_before_is_the_scan_over_every_rounds_pauses(
    spans: dict[str, list[tuple[float, float | None]]], rid: str, t: float
) -> None:
    pauses = {r: Pauses(tuple(s)) for r, s in spans.items()}
    assert resumed_before(first_resumes(pauses), rid, t) == _scan(pauses, rid, t)
