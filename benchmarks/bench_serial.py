"""Serial throughput: frames/s through the codec, and through our pty transport against the bare path.

    .venv/bin/python benchmarks/bench_serial.py [--frames N] [--repeat K] [--json]

1. Codec, best of K: encode, and decode (one feed, and 7-byte slices) of a mix of real device frames, frames/s;
   target decode >= 250,000 frames/s. For information: the same mix with an event time ``at=`` on every device
   frame (no two frames alike), and the reference server's own decoder (:class:`gameserver.protocol.Decoder`).
2. Pty, same pty pair in the same run; the reader is pyserial on the slave path in a separate process (as a
   game server is), timed from the first write to the last frame read:
   - bare: pre-encoded frames written with ``os.write`` to the master, the reader counts line ends (the limit);
   - transport: the same frames written through :class:`harness.wire.transports.pty.PtyPort`, same reader;
     ratio transport/bare, target >= 0.50;
   - full stack: each frame encoded by the codec, written through PtyPort, and decoded with
     :class:`harness.wire.text.FrameDecoder` (CRC checked) by the reader; ratio full/bare, target >= 0.30.
   Best of K repeats, the paths alternating.
3. Each shipped device dialect (``xocdia-hil dialects``), same pty: ``bare`` writes the dialect's pre-encoded frames
   with ``os.write`` and the reader counts their bytes; ``full`` encodes each frame with the dialect's codec, writes
   it through PtyPort, and the reader decodes with the dialect's stream decoder; ratio full/bare per dialect (for
   information, the same target as 2.). The frames are seeded random frames of every message the dialect carries.

``--json`` prints the figures, the targets and the verdicts as one JSON object instead of the table.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import multiprocessing
import os
import random
import tempfile
import time
from collections.abc import Callable
from multiprocessing.connection import Connection
from pathlib import Path

import serial

from gameserver.protocol import Decoder as ServerDecoder
from harness.wire.dialects.base import FrameCodec
from harness.wire.dialects.conformance import random_frames
from harness.wire.dialects.registry import SHIPPED, load_dialect
from harness.wire.frame_errors import BadFrame
from harness.wire.messages import (
    TAGGABLE,
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
from harness.wire.text import FrameDecoder, encode
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


DECODE_TARGET = 250_000  # frames/s
TRANSPORT_TARGET = 0.50  # of bare os.write
FULL_TARGET = 0.30  # of bare os.write


def stamped(n: int) -> list[Frame]:
    """The mix with seq counting up and an event time on every device data frame: no two frames alike."""
    return [
        dataclasses.replace(f, seq=i % 65535 + 1, at=(1000 + i) if type(f.message) in TAGGABLE else None)
        for i, f in enumerate(frames(n))
    ]


def best_rate(n: int, repeat: int, run: Callable[[], object]) -> float:
    """n / the shortest of ``repeat`` timed calls of ``run``."""
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        run()
        best = min(best, time.perf_counter() - t0)
    return n / best


def bench_codec(n: int, repeat: int) -> dict[str, float]:
    items = frames(n)
    stream = b"".join(encode(f) for f in items)
    got = FrameDecoder().feed(stream)
    assert len(got) == n and not any(isinstance(g, BadFrame) for g in got)
    new_items = stamped(n)
    new_stream = b"".join(encode(f) for f in new_items)
    assert FrameDecoder().feed(new_stream) == new_items
    assert len(ServerDecoder().feed(stream)) == n

    def sliced() -> None:
        decoder, count = FrameDecoder(), 0
        for i in range(0, len(stream), 7):
            count += len(decoder.feed(stream[i : i + 7]))
        assert count == n

    return {
        "encode": best_rate(n, repeat, lambda: [encode(f) for f in items]),
        "decode": best_rate(n, repeat, lambda: FrameDecoder().feed(stream)),
        "decode_sliced": best_rate(n, repeat, sliced),
        "decode_stamped": best_rate(n, repeat, lambda: FrameDecoder().feed(new_stream)),
        "server_decode": best_rate(n, repeat, lambda: ServerDecoder().feed(stream)),
    }


def read_side(path: str, n: int, decode: bool, conn: Connection, dialect: str = "", total: int = 0) -> None:
    """Read until n frames arrived (``dialect``: decoded with its stream decoder; bare with ``total``: until that
    many bytes arrived); send the perf_counter time of the last frame (CLOCK_MONOTONIC: the same clock in both
    processes), or nan if they did not all arrive."""
    stream = load_dialect(dialect).codec().decoder() if dialect else FrameDecoder()
    with serial.Serial(path, timeout=0.5) as port:
        conn.send("ready")
        seen, got, idle = 0, 0, 0
        while seen < n and idle < 10:
            data = port.read(port.in_waiting or 1)
            if not data:
                idle += 1
                continue
            idle = 0
            if decode:
                seen += sum(1 for f in stream.feed(data) if not isinstance(f, BadFrame))
            elif total:
                got += len(data)
                seen = n if got >= total else 0
            else:
                seen += data.count(b"\n")
        conn.send(time.perf_counter() if seen >= n else float("nan"))


def timed(path: str, n: int, decode: bool, write_all: Callable[[], None], dialect: str = "", total: int = 0) -> float:
    ours, theirs = multiprocessing.Pipe()
    reader = multiprocessing.get_context("fork").Process(
        target=read_side, args=(path, n, decode, theirs, dialect, total)
    )
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
    with tempfile.TemporaryDirectory() as tmp, PtyPort("bench", Path(tmp), write_timeout_s=5.0) as pty:
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


def bench_dialects(n: int, repeat: int) -> dict[str, dict[str, float]]:
    """Per shipped dialect: bare (pre-encoded bytes, os.write) and full stack (codec + PtyPort + stream decoder)."""
    out: dict[str, dict[str, float]] = {}
    for name in SHIPPED:
        dialect = load_dialect(name)
        codec = dialect.codec()
        items = random_frames(dialect, random.Random(f"bench-serial/{name}"), n)
        pre = [codec.encode(f) for f in items]
        total = sum(len(b) for b in pre)
        with tempfile.TemporaryDirectory() as tmp, PtyPort("bench", Path(tmp), write_timeout_s=5.0) as pty:
            master = pty.fds()[0]

            def bare(master: int = master, pre: list[bytes] = pre) -> None:
                os.set_blocking(master, True)
                try:
                    for chunk in pre:
                        os.write(master, chunk)
                finally:
                    os.set_blocking(master, False)

            def full(pty: PtyPort = pty, items: list[Frame] = items, codec: FrameCodec = codec) -> None:
                for f in items:
                    pty.write(codec.encode(f))

            best = {"bare": 0.0, "full": 0.0}
            for _ in range(repeat):
                best["bare"] = max(best["bare"], timed(pty.address, n, False, bare, name, total))
                best["full"] = max(best["full"], timed(pty.address, n, True, full, name))
            best["ratio"] = best["full"] / best["bare"] if best["bare"] else float("nan")
            out[name] = best
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--frames", type=int, default=20000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of the table")
    args = parser.parse_args()
    codec = bench_codec(args.frames, args.repeat)
    best, dropped = bench_pty(args.frames, args.repeat)
    dialects = bench_dialects(args.frames, args.repeat)
    bare, ours, full = best["bare"], best["transport"], best["full"]
    verdicts = {
        "decode": codec["decode"] >= DECODE_TARGET,
        "transport_ratio": ours / bare >= TRANSPORT_TARGET,
        "full_ratio": full / bare >= FULL_TARGET,
    }
    if args.json:
        report = {
            "frames": args.frames,
            "repeat": args.repeat,
            "codec_fps": codec,
            "pty_fps": best,
            "transport_ratio": ours / bare,
            "full_ratio": full / bare,
            "bytes_dropped": dropped,
            "dialects": dialects,
            "targets": {"decode": DECODE_TARGET, "transport_ratio": TRANSPORT_TARGET, "full_ratio": FULL_TARGET},
            "pass": verdicts,
        }
        print(json.dumps(report, indent=2))
        return

    def verdict(key: str, target: str) -> str:
        return f"target >= {target}: {'PASS' if verdicts[key] else 'FAIL'}"

    rows = [
        ("codec encode", f"{codec['encode']:12,.0f} frames/s", ""),
        ("codec decode (one feed)", f"{codec['decode']:12,.0f} frames/s", verdict("decode", f"{DECODE_TARGET:,}")),
        ("codec decode (7-byte)", f"{codec['decode_sliced']:12,.0f} frames/s", ""),
        ("codec decode (all at=)", f"{codec['decode_stamped']:12,.0f} frames/s", "every device frame new (at=)"),
        ("server decode (one feed)", f"{codec['server_decode']:12,.0f} frames/s", "gameserver.protocol.Decoder"),
        ("pty bare os.write", f"{bare:12,.0f} frames/s", "the limit, measured in this run"),
        ("pty PtyPort.write", f"{ours:12,.0f} frames/s", ""),
        (
            "ratio transport/bare",
            f"{ours / bare:12.2f}         ",
            verdict("transport_ratio", f"{TRANSPORT_TARGET:.2f}"),
        ),
        ("pty full stack", f"{full:12,.0f} frames/s", "encode + PtyPort + FrameDecoder"),
        ("ratio full stack/bare", f"{full / bare:12.2f}         ", verdict("full_ratio", f"{FULL_TARGET:.2f}")),
        ("bytes dropped by PtyPort", f"{dropped:12d}         ", ""),
    ]
    for name, d in dialects.items():
        rows.append((f"dialect {name}", f"{d['full']:12,.0f} frames/s", f"full stack; bare {d['bare']:,.0f}"))
        rows.append(("  ratio full/bare", f"{d['ratio']:12.2f}         ", ""))
    for label, value, note in rows:
        print(f"{label:25s} {value}   {note}".rstrip())


if __name__ == "__main__":
    main()
