"""Decoder fuzz of the shipped dialects, at scale: every decoder fed mutated frames never raises and never yields a
message that was not sent.

    .venv/bin/python benchmarks/fuzz_dialects.py [--frames N] [--dialect NAME ...] [--seed S] [--json]

Default: 10^6 frames per dialect, every dialect ``xocdia-hil dialects`` lists. For each dialect, each case starts a
fresh stream decoder (the harness's ``codec().decoder()``, and the reference server's own decoder where
:data:`SERVER_SIDES` has one) and feeds it one of these, in turn:

- ``split``: one valid frame cut at a random point (two reads) — must give exactly that frame;
- ``pair``: two valid frames in one read — must give exactly those two;
- ``flip``: a valid frame with 1 to 3 bits flipped — must never raise; with an integrity check (CRC, LRC) whatever
  comes out must be the frame sent; without one (TCP dialects) a flip may give another valid message: counted for
  information (``flips accepted``), and the two sides must agree on how many messages there are;
- ``cut``: a frame's first bytes, then a whole frame — may lose both, must give nothing else;
- ``garbage``: 1 to 64 random bytes — must give nothing;
- ``garbage+frame``: random bytes, then a whole frame — may lose the frame, must give nothing else.

Prints one line per dialect (cases, exceptions, false messages, flips accepted, cases/s) and exits 1 if any dialect
raised or yielded a false message. The frames come from the conformance kit's generator
(:func:`harness.wire.dialects.conformance.random_frames`); the test suite runs a smaller count of the same checks.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any

from gameserver.protocol import BadFrame as _SBad
from harness.wire.dialects.base import Dialect, FrameCodec
from harness.wire.dialects.conformance import random_frames, semantic
from harness.wire.dialects.registry import load_dialect, names
from harness.wire.frame_errors import BadFrame, EncodeError
from harness.wire.messages import Frame

#: A server side's decoder: a fresh one per case; ``feed(data)`` returns how many messages it yielded.
ServerFeed = Callable[[], Callable[[bytes], int]]


def _jsonl_server() -> Callable[[bytes], int]:
    from gameserver.dialects.jsonl import line as jsonl  # the reference server's own decoder, written from the spec

    lines = jsonl._Lines()

    def feed(data: bytes) -> int:
        return sum(
            1 for item in lines.feed(data) if isinstance(item, bytes) and not isinstance(jsonl.parse(item), _SBad)
        )

    return feed


def _bus_server() -> Callable[[bytes], int]:
    from gameserver.dialects.bus import wire as bus_wire  # the reference server's own decoder, written from the spec

    decoder = bus_wire.Decoder()

    def feed(data: bytes) -> int:
        return sum(1 for item in decoder.feed(data) if isinstance(item, bus_wire.BusFrame))

    return feed


#: dialect name -> its reference-server decoder, for the dialects whose server side has a standalone one.
SERVER_SIDES: dict[str, ServerFeed] = {
    "xocdia-bus": _bus_server,
    "xocdia-jsonl": _jsonl_server,
}
KINDS = ("split", "pair", "flip", "cut", "garbage", "garbage+frame")


@dataclass
class Report:
    dialect: str
    cases: int = 0
    exceptions: int = 0
    false_messages: int = 0
    flips_accepted: int = 0
    sides_disagree: int = 0
    seconds: float = 0.0
    first_problem: str = ""

    @property
    def ok(self) -> bool:
        return self.exceptions == 0 and self.false_messages == 0 and self.sides_disagree == 0


def _decode(codec: FrameCodec, chunks: list[bytes]) -> list[Frame]:
    decoder = codec.decoder()
    out: list[Frame] = []
    for chunk in chunks:
        out += [i for i in decoder.feed(chunk) if not isinstance(i, BadFrame)]
    return out


def _frames(dialect: Dialect, codec: FrameCodec, rng: random.Random, count: int) -> list[tuple[Frame, bytes]]:
    pool: list[tuple[Frame, bytes]] = []
    for frame in random_frames(dialect, rng, count):
        try:
            pool.append((frame, codec.encode(frame)))
        except EncodeError:
            continue
    return pool


def fuzz(name: str, frames: int, seed: int) -> Report:
    dialect = load_dialect(name)
    codec = dialect.codec()
    checked = dialect.integrity_checked
    rng = random.Random(f"xocdia-fuzz/{name}/{seed}")
    pool = _frames(dialect, codec, rng, 4000)
    server = SERVER_SIDES.get(name)
    report = Report(name)
    start = time.perf_counter()
    for n in range(frames):
        kind = KINDS[n % len(KINDS)]
        frame, raw = pool[rng.randrange(len(pool))]
        other, raw2 = pool[rng.randrange(len(pool))]
        must: list[Frame] | None = None  # the exact output required, or None: a subset of ``may``
        may: list[Frame] = []
        exempt = False
        if kind == "split":
            cut = rng.randint(0, len(raw))
            chunks, must = [raw[:cut], raw[cut:]], [frame]
        elif kind == "pair":
            chunks, must = [raw + raw2], [frame, other]
        elif kind == "flip":
            flipped = bytearray(raw)
            for _ in range(rng.randint(1, 3)):
                bit = rng.randrange(len(flipped) * 8)
                flipped[bit // 8] ^= 1 << (bit % 8)
            chunks, may, exempt = [bytes(flipped)], [frame], not checked
        elif kind == "cut":
            chunks, may = [raw[: rng.randrange(len(raw))] + raw2], [other]
        elif kind == "garbage":
            chunks = [rng.randbytes(rng.randint(1, 64))]
        else:
            chunks, may = [rng.randbytes(rng.randint(1, 64)) + raw2], [other]
        report.cases += 1
        try:
            got = _decode(codec, chunks)
        except Exception as exc:  # the point of the fuzz: count it, name the first
            report.exceptions += 1
            report.first_problem = report.first_problem or f"{kind}: {type(exc).__name__}: {exc} on {chunks!r}"
            continue
        if must is not None:
            bad = [semantic(f) for f in got] != [semantic(f) for f in must]
        else:
            allowed = {semantic(f) for f in may}
            bad = any(semantic(f) not in allowed for f in got)
            if bad and exempt:
                report.flips_accepted += 1
                bad = False
        if bad:
            report.false_messages += 1
            report.first_problem = report.first_problem or f"{kind}: got {got} for {chunks!r}"
        if server is not None:
            try:
                feed = server()
                count = sum(feed(c) for c in chunks)
            except Exception as exc:
                report.exceptions += 1
                report.first_problem = report.first_problem or f"server {kind}: {type(exc).__name__}: {exc}"
                continue
            if count != len(got):
                report.sides_disagree += 1
                report.first_problem = (
                    report.first_problem or f"{kind}: server {count} vs harness {len(got)}: {chunks!r}"
                )
    report.seconds = time.perf_counter() - start
    return report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--frames", type=int, default=1_000_000, help="cases per dialect (default 10^6)")
    parser.add_argument("--dialect", action="append", help="a dialect name (repeatable; default: every listed one)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", action="store_true", help="one JSON object instead of the table")
    args = parser.parse_args(argv)
    reports = [fuzz(name, args.frames, args.seed) for name in (args.dialect or names())]
    if args.json:
        out: dict[str, Any] = {r.dialect: {**asdict(r), "ok": r.ok} for r in reports}
        print(json.dumps(out, indent=2))
    else:
        head = f"{'dialect':<16}{'cases':>10}{'raised':>8}{'false':>7}{'flips accepted':>16}{'disagree':>10}"
        print(f"{head}{'cases/s':>10}")
        for r in reports:
            rate = r.cases / r.seconds if r.seconds else 0.0
            print(
                f"{r.dialect:<16}{r.cases:>10}{r.exceptions:>8}{r.false_messages:>7}{r.flips_accepted:>16}"
                f"{r.sides_disagree:>10}{rate:>10,.0f}  {'PASS' if r.ok else 'FAIL'}"
            )
            if r.first_problem:
                print(f"    first problem: {r.first_problem[:300]}")
    return 0 if all(r.ok for r in reports) else 1


if __name__ == "__main__":
    sys.exit(main())
