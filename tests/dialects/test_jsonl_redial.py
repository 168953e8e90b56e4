"""The reader end's :class:`~harness.wire.dialects.capabilities.Redialing`: its connection left right after a read,
the acknowledgement on the way lost, and a new session when the reader next has a read: a hello, the unacknowledged
read again under its own seq, then the new read. Against the reference server's JsonlLine and the harness's own server
end, both of which take the copy for the read they have (the device-link scenario of a reconnect followed by a
resend, features/device_link.feature, stands on it)."""

from __future__ import annotations

from typing import Any

import pytest

from harness.wire.dialects.capabilities import Redial, Redialing
from harness.wire.messages import Result, ShakeStart, Source
from tests.dialects.test_jsonl_dialogue import LINES, Wire, _kinds, _reader


@pytest.mark.parametrize("make", LINES)
def test_the_read_sent_again_on_the_new_connection_is_delivered_once(make: Any) -> None:
    reader = _reader()
    assert isinstance(reader, Redialing)
    wire = Wire(reader, make())
    wire.connect()
    wire.run(0.1)
    reader.redial_after(Source.READER, Result)
    wire.report(Result("RRWW", False), "12", 5000)  # reaches the server; its ack does not reach the reader
    assert reader.redials() == (Redial(Source.READER, 2, "RESULT", False, False),)
    assert reader.pending() == 1 and reader.next_deadline() is None  # away: no retransmission, no heartbeat
    wire.run(wire.now + 2.0)
    assert reader.take_output() == b""
    wire.report(Result("WWWW", False), "13", 9000)  # the next read: a new session first
    wire.run(wire.now + 0.5)
    assert _kinds(wire.delivered) == ["HELLO:1", "RESULT:2", "RESULT:4"]  # seq 3: the reconnect's hello
    assert reader.redials() == (Redial(Source.READER, 2, "RESULT", True, True),)
    assert reader.pending() == 0


def test_a_redial_is_refused_for_another_device() -> None:
    reader = _reader()
    with pytest.raises(ValueError, match="READER, not SHAKER"):
        reader.redial_after(Source.SHAKER, ShakeStart)
