"""Serial throughput: frames/s through the codec, and through our pty transport against the bare path.

    .venv/bin/python benchmarks/bench_serial.py [--frames N] [--repeat K]

1. Codec: encode and decode (one feed, and 7-byte slices) of a mix of real device frames, frames/s.
2. Pty, same pty pair in the same run; the reader is pyserial on the slave path in a separate process (as a
   game server is), timed from the first write to the last frame read:
   - bare: pre-encoded frames written with ``os.write`` to the master, the reader counts line ends;
   - transport: the same frames written through :class:`harness.wire.transports.pty.PtyPort`, same reader;
     ratio transport/bare, target >= 0.50;
   - full stack (information): each frame encoded by the codec, written through PtyPort, and decoded with
     :class:`harness.wire.protocol.codec.FrameDecoder` (CRC checked) by the reader.
   Best of K repeats, the paths alternating.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import tempfile
import time
from collections.abc import Callable
from multiprocessing.connection import Connection
from pathlib import Path

import serial

from harness.wire.protocol.codec import BadFrame, FrameDecoder, encode
from harness.wire.protocol.messages import (
    BowlOff,
    BowlOn,
    Drop,
    DropItem,
    Frame,
    LampOpen,
    Result,
    ShakeEnd,
    ShakeStart,
    Source,
)
from harness.wire.transports.pty import PtyPort

MIX = [
    Frame(1, Source.BOWL, BowlOn()),
    Frame(2, Source.SHAKER, ShakeStart()),
    Frame(3, Source.SHAKER, ShakeEnd()),
    Frame(4, Source.BOWL, BowlOff(True, 2)),
    Frame(5, Source.READER, Result("RWSR", False)),
    Frame(6, Source.SHAKER, Drop(DropItem.TOKEN, 3)),
    Frame(7, Source.SERVER, LampOpen("R000017", 15000)),
]


def frames(n: int) -> list[Frame]:
    return [MIX[i % len(MIX)] for i in range(n)]


def bench_codec(n: int) -> tuple[float, float, float]:
    items = frames(n)
    t0 = time.perf_counter()
    raw = [encode(f) for f in items]
    t1 = time.perf_counter()
    stream = b"".join(raw)
    got = FrameDecoder().feed(stream)
    t2 = time.perf_counter()
    decoder, count = FrameDecoder(), 0
    for i in range(0, len(stream), 7):
        count += len(decoder.feed(stream[i : i + 7]))
    t3 = time.perf_counter()
    assert len(got) == n == count and not any(isinstance(g, BadFrame) for g in got)
    return n / (t1 - t0), n / (t2 - t1), n / (t3 - t2)


def read_side(path: str, n: int, decode: bool, conn: Connection) -> None:
    """Read until n frames arrived; send the perf_counter time of the last frame (CLOCK_MONOTONIC: the same
    clock in both processes), or nan if they did not all arrive."""
    with serial.Serial(path, timeout=0.5) as port:
        conn.send("ready")
        decoder, seen, idle = FrameDecoder(), 0, 0
        while seen < n and idle < 10:
            data = port.read(port.in_waiting or 1)
            if not data:
                idle += 1
                continue
            idle = 0
            if decode:
                seen += sum(1 for f in decoder.feed(data) if not isinstance(f, BadFrame))
            else:
                seen += data.count(b"\n")
        conn.send(time.perf_counter() if seen >= n else float("nan"))


def timed(path: str, n: int, decode: bool, write_all: Callable[[], None]) -> float:
    ours, theirs = multiprocessing.Pipe()
    reader = multiprocessing.get_context("fork").Process(target=read_side, args=(path, n, decode, theirs))
    reader.start()
    try:
        if not ours.poll(10) or ours.recv() != "ready":
            return float("nan")
        start = time.perf_counter()
        write_all()
        end = ours.recv() if ours.poll(60) else float("nan")
    finally:
        reader.join(timeout=10)
        if reader.is_alive():
            reader.kill()
    return n / (end - start)


def bench_pty(n: int, repeat: int) -> tuple[dict[str, float], int]:
    items = frames(n)
    pre = [encode(f) for f in items]
    with tempfile.TemporaryDirectory() as tmp, PtyPort("bench", Path(tmp), write_timeout=5.0) as pty:
        master = pty.fds()[0]

        def bare() -> None:
            os.set_blocking(master, True)
            try:
                for chunk in pre:
                    os.write(master, chunk)
            finally:
                os.set_blocking(master, False)

        def transport() -> None:
            for chunk in pre:
                pty.write(chunk)

        def full_stack() -> None:
            for f in items:
                pty.write(encode(f))

        best = {"bare": 0.0, "transport": 0.0, "full": 0.0}
        for _ in range(repeat):
            best["bare"] = max(best["bare"], timed(pty.address, n, False, bare))
            best["transport"] = max(best["transport"], timed(pty.address, n, False, transport))
            best["full"] = max(best["full"], timed(pty.address, n, True, full_stack))
        return best, pty.dropped


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--frames", type=int, default=20000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    enc, dec, sliced = bench_codec(args.frames)
    print(f"codec encode              {enc:12,.0f} frames/s")
    print(f"codec decode (one feed)   {dec:12,.0f} frames/s")
    print(f"codec decode (7-byte)     {sliced:12,.0f} frames/s")
    best, dropped = bench_pty(args.frames, args.repeat)
    bare, ours, full = best["bare"], best["transport"], best["full"]
    ratio = ours / bare
    verdict = "PASS" if ratio >= 0.5 else "FAIL"
    print(f"pty bare os.write         {bare:12,.0f} frames/s   (limit, measured in this run)")
    print(f"pty PtyPort.write         {ours:12,.0f} frames/s")
    print(f"ratio transport/bare      {ratio:12.2f}          target >= 0.50: {verdict}")
    print(f"pty full stack            {full:12,.0f} frames/s   encode+PtyPort+FrameDecoder, {full / bare:.2f} of bare")
    print(f"bytes dropped by PtyPort  {dropped:12d}")


if __name__ == "__main__":
    main()
