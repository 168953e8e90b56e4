"""Hypothesis strategies for protocol frames, shared by the protocol, transport and device tests."""

from __future__ import annotations

from hypothesis import strategies as st

from harness.wire.messages import (
    CATALOGUE,
    TAGGABLE,
    Ack,
    BowlOff,
    ConsoleRearranged,
    Drop,
    DropItem,
    Frame,
    Hello,
    LampClose,
    LampOpen,
    LampPause,
    LampReshake,
    LampResume,
    LampVoid,
    Message,
    Nak,
    NakReason,
    Problem,
    ProblemReason,
    ReaderRearranged,
    ReshakeReason,
    Result,
    Source,
    VoidClause,
)

VALUE_CHARS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._:-"
values = st.text(alphabet=VALUE_CHARS, min_size=1, max_size=32)
seqs = st.integers(min_value=1, max_value=65535)
tokens = st.integers(min_value=0, max_value=3)
#: device clock readings (docs/protocol.md §6, "Event time"): small, around a 32-bit counter's wrap, and the
#: longest a §2 value allows (32 digits)
event_times = st.one_of(
    st.integers(0, 1000), st.integers(2**32 - 2, 2**32 + 2), st.integers(0, 10**32 - 1), st.just(10**32 - 1)
)


def _bowl_off() -> st.SearchStrategy[Message]:
    return st.one_of(st.just(BowlOff(False, None)), tokens.map(lambda t: BowlOff(True, t)))


def _drop() -> st.SearchStrategy[Message]:
    return st.one_of(
        st.sampled_from([Drop(DropItem.BOWL, None), Drop(DropItem.PLATE, None)]),
        tokens.map(lambda t: Drop(DropItem.TOKEN, t)),
    )


_SPECIAL: dict[type[Message], st.SearchStrategy[Message]] = {
    Hello: st.builds(Hello, id=values, proto=st.integers(1, 65535), fw=values),
    Ack: st.builds(Ack, of=seqs),
    Nak: st.builds(Nak, of=seqs, reason=st.sampled_from(NakReason)),
    BowlOff: _bowl_off(),
    Drop: _drop(),
    Result: st.builds(Result, faces=st.text("RWSU", min_size=4, max_size=4), overlap=st.booleans()),
    ReaderRearranged: st.builds(ReaderRearranged, faces=st.text("RW", min_size=4, max_size=4)),
    Problem: st.builds(Problem, reason=st.sampled_from(ProblemReason)),
    # rounds are short enough that the longest frame stays within 128 bytes
    LampOpen: st.builds(LampOpen, round=values, ms=st.integers(0, 86_400_000)),
    LampClose: st.builds(LampClose, round=values),
    LampReshake: st.builds(LampReshake, round=values, reason=st.sampled_from(ReshakeReason)),
    LampPause: st.builds(LampPause, round=values),
    LampResume: st.builds(LampResume, round=values),
    LampVoid: st.builds(LampVoid, round=values, clause=st.sampled_from(VoidClause)),
    ConsoleRearranged: st.just(ConsoleRearranged()),
}


def messages_of(cls: type[Message]) -> st.SearchStrategy[Message]:
    """Valid instances of one message class."""
    special = _SPECIAL.get(cls)
    return special if special is not None else st.just(cls())


@st.composite
def frames(draw: st.DrawFn) -> Frame:
    """Any valid frame of the catalogue: a (src, TYPE) pair, a message for it and a fitting seq."""
    src, _type = draw(st.sampled_from(sorted(CATALOGUE, key=lambda k: (k[0].value, k[1]))))
    cls = CATALOGUE[(src, _type)]
    msg = draw(messages_of(cls))
    seq = 0 if cls.CONTROL else draw(seqs)
    tagged = cls in TAGGABLE
    tag = draw(st.none() | values) if tagged else None
    at = draw(st.none() | event_times) if tagged else None
    return Frame(seq=seq, src=Source(src), message=msg, round=tag, at=at)
