"""The floor under bench_rig's rate: the unavoidable work of one in-process bench round, timed part by part, against
the bench's target (2,000 rounds/s: 500 us a round) and the whole rig measured in the same run.

    .venv/bin/python benchmarks/bench_rig_floor.py [--rounds N] [--players N] [--repeat K] [--seed S] [--json]

The rig is played once first (not timed) as ``bench_rig.py`` plays it (same bench, seed, crowd and wallets), with
what crossed each seam recorded: every chunk of bytes on every line in both directions (the rig's own trace,
``rig.recorder``) and every call the in-process adapter made on the server's ``RoundEngine`` that can change it
(``report``, ``place_bet``, ``tick``, ``open_round``, ``drain``, ..., each with its sim time), through a thin proxy
put in place of the adapter's engine. Replaying those calls must give the events the rig's ledger holds (same kinds
in the same order); otherwise the script exits 1. Then, best of K each, as microseconds a round:

a. the model alone: a simulator ``Table``, same profile, seed and seats, its own lamp (``bench_rig.model_run``);
b. decoding every recorded chunk: device -> server by the server's ``gameserver.protocol.Decoder``, server -> device
   by the harness's ``FrameDecoder``, one fresh decoder per line and direction;
c. encoding every one of those frames once more by the side that sent it (device frames by the harness encoder,
   server frames by ``gameserver.protocol.encode``); checked beforehand to give back the recorded bytes exactly;
d. the engine and ledger alone: a fresh ``RoundEngine`` (same config, same wallets) on a fake clock set to each
   recorded call's time, the calls replayed in order, each ``drain``'s events appended to a fresh ``InMemoryLedger``.

Each part runs after a full garbage collection with the collector paused, as the model alone does (``Table.run``);
the rig runs as shipped, collector on. Decoders and encoders keep their module caches of message parts warm from
the recording, as the rig's are after its first rounds.

The floor is a+b+c+d; the rig's own rate (``bench_rig.rig_run``, best of K) is beside it twice: as shipped, and on
the bench with the server as the floor counts it (``api: direct``, ``ledger: memory``: :func:`like_floor`). The
second over the floor is what the bench's plumbing costs on top (SimPy events, line and hub services, timers, the
crowd, transports, the trace); the first less the second is what the shipped server's HTTP application and durable
SQLite ledger cost a round (``api_and_ledger_us_per_round``).
Left out of the floor: the link layers on both ends (ACKs, sequence checks), frame -> report and event -> lamp command
translation, the adapter's and the rig's bookkeeping; the engine's ``next_deadline`` queries (timer arming) are
counted, not replayed; the wallets opened at build are set up untimed. Chunks are decoded as the devices wrote and
read them (the server's reads may join some). All times are wall clock (``perf_counter``), as bench_rig's: on a
shared machine compare the ratios, taken in the same run, more than the absolute figures.

``--json`` prints the same figures as one object (parts, floor, rig, ratios, counts a round, load average).
"""

from __future__ import annotations

import gc
import json
import os
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from bench_rig import (  # this folder is on sys.path
    model_run,
    parse_rig_arguments,
    rig_arguments,
    rig_run,
    wallets,
)

from gameserver.engine import RoundEngine
from gameserver.events import Event
from gameserver.ledger import InMemoryLedger
from gameserver.model import EngineConfig, Rejection
from gameserver.protocol import Decoder
from gameserver.protocol import Frame as ServerFrame
from gameserver.protocol import encode as server_encode
from harness.bench.adapters.reference_inprocess import InProcessAdapter
from harness.bench.config import Bench
from harness.bench.rig import Rig
from harness.wire.messages import Frame as HarnessFrame
from harness.wire.text.decoder import FrameDecoder
from harness.wire.text.encoder import encode as harness_encode

TARGET_US = 500.0  # 2,000 rounds/s
LABELS = {
    "model": "a  model alone",
    "decode_server": "b  decode dev->srv (server Decoder)",
    "decode_harness": "b  decode srv->dev (FrameDecoder)",
    "encode_harness": "c  encode dev frames (harness)",
    "encode_server": "c  encode srv frames (server)",
    "engine_ledger": "d  engine + ledger (calls replayed)",
}
# Engine methods that may change it (replayed); any other method the adapter calls is a query (counted only).
REPLAYED = frozenset(
    {"report", "place_bet", "tick", "open_round", "drain", "device_incident", "pause", "resume", "cancel", "correct"}
    | {"recover_after_restart", "open_wallet"}
)


@dataclass(frozen=True, slots=True)
class Call:
    at: float  # sim time of the call (the engine's clock then)
    method: Callable[..., Any]  # the unbound RoundEngine method
    args: tuple[Any, ...]
    kwargs: dict[str, Any]


class RecordingEngine:
    """Stands in for the adapter's engine: forwards everything to it and logs the calls of :data:`REPLAYED`."""

    def __init__(self, engine: RoundEngine, clock: Callable[[], float]) -> None:
        self._engine, self._clock = engine, clock
        self.calls: list[Call] = []
        self.queries: Counter[str] = Counter()

    def __getattr__(self, name: str) -> Any:
        value = getattr(self._engine, name)
        if not callable(value):
            return value
        if name not in REPLAYED:
            self.queries[name] += 1
            return value
        method, calls, clock = getattr(RoundEngine, name), self.calls, self._clock

        def call(*args: Any, **kwargs: Any) -> Any:
            calls.append(Call(clock(), method, args, kwargs))
            return value(*args, **kwargs)

        return call


@dataclass
class Recording:
    config: EngineConfig
    opening: dict[str, int]
    calls: list[Call]
    queries: Counter[str]
    events: list[Event]  # the rig's ledger, wallets included
    tx: list[tuple[str, bytes]]  # device -> server chunks (line, bytes), in order
    rx: list[tuple[str, bytes]]  # server -> device chunks
    device_frames: list[tuple[str, HarnessFrame]]  # the tx chunks' frames with their lines, for the harness encoder
    server_frames: list[tuple[str, ServerFrame]]  # the rx chunks' frames, for the server's encoder


def record(bench: Bench, rounds: int, players: int, seed: int) -> Recording:
    """Play the rig once with its engine behind a :class:`RecordingEngine`; check the frames re-encode exactly.
    The rig calls the engine directly (``server.options.api: direct``) so that every engine call is recorded: the
    server's HTTP application that ``api: http`` puts in front of it is not work the floor counts."""
    opening = wallets(players, rounds)
    direct = replace(bench.server, options={**bench.server.options, "api": "direct"})
    with Rig.build(replace(bench, server=direct), opening, crowd=players, seed=seed) as rig:
        adapter = rig.adapter
        assert isinstance(adapter, InProcessAdapter)
        env = rig.env
        proxy = RecordingEngine(adapter.engine, lambda: float(env.now))
        adapter._engine = proxy  # type: ignore[assignment]
        for _ in range(rounds):
            rig.play_to_end(rig.open_round())
        events = adapter._ledger.events(0, sys.maxsize)
        trace = list(rig.recorder.records)
    tx = [(r.port, r.data) for r in trace if r.dir == "tx"]
    rx = [(r.port, r.data) for r in trace if r.dir == "rx"]
    device_frames, server_frames = frames(tx, FrameDecoder, HarnessFrame), frames(rx, Decoder, ServerFrame)
    again = [(line, harness_encode(f)) for line, f in device_frames]
    if joined(tx) != joined(again) or len(frames(tx, Decoder, ServerFrame)) != len(again):
        sys.exit("the device frames re-encoded are not the bytes recorded")
    again = [(line, server_encode(f.seq, f.src, f.type, f.fields)) for line, f in server_frames]
    if joined(rx) != joined(again) or len(frames(rx, FrameDecoder, HarnessFrame)) != len(again):
        sys.exit("the server frames re-encoded are not the bytes recorded")
    config = proxy._engine.config
    return Recording(config, opening, proxy.calls, proxy.queries, events, tx, rx, device_frames, server_frames)


def frames(chunks: list[tuple[str, bytes]], decoder: Callable[[], Any], kind: type) -> list[tuple[str, Any]]:
    """The frames of ``chunks`` with their lines, one ``decoder()`` per line; exits on anything but a ``kind``."""
    decoders: dict[str, Any] = defaultdict(decoder)
    out = [(line, item) for line, data in chunks for item in decoders[line].feed(data)]
    bad = [item for _, item in out if not isinstance(item, kind)]
    if bad:
        sys.exit(f"a recorded chunk holds a bad frame: {bad[0]!r}")
    return out


def joined(chunks: list[tuple[str, bytes]]) -> dict[str, bytes]:
    """Each line's bytes, end to end."""
    out: dict[str, bytearray] = defaultdict(bytearray)
    for line, data in chunks:
        out[line] += data
    return {line: bytes(data) for line, data in out.items()}


def timed(work: Callable[[], object]) -> float:
    """Seconds ``work`` took, after a full garbage collection, with the collector paused (as ``Table.run`` does)."""
    gc.collect()
    gc.disable()
    try:
        start = time.perf_counter()
        work()
        return time.perf_counter() - start
    finally:
        gc.enable()


def decode(chunks: list[tuple[str, bytes]], decoder: Callable[[], Any]) -> Callable[[], object]:
    def run() -> None:
        decoders = {line: decoder() for line, _ in chunks}
        for line, data in chunks:
            decoders[line].feed(data)

    return run


def replay(rec: Recording) -> tuple[Callable[[], object], Callable[[], list[Event]]]:
    """The timed replay of the engine calls (with its untimed setup done) and what its ledger then holds."""
    now = [0.0]
    engine = RoundEngine(rec.config, lambda: now[0])
    ledger = InMemoryLedger()
    for player, balance in rec.opening.items():
        engine.open_wallet(player, balance)
    ledger.append(engine.drain())
    drain, calls = RoundEngine.drain, rec.calls

    def run() -> None:
        for call in calls:
            now[0] = call.at
            try:
                out = call.method(engine, *call.args, **call.kwargs)
            except Rejection:
                continue
            if call.method is drain and out:
                ledger.append(out)

    return run, lambda: ledger.events(0, sys.maxsize)


def like_floor(bench: Bench) -> Bench:
    """``bench`` with the server as the floor counts it: the engine called directly (``api: direct``) and the
    in-memory ledger (``ledger: memory``), so that the rig on it differs from the floor by the bench's plumbing only."""
    options = {**bench.server.options, "api": "direct", "ledger": "memory"}
    return replace(bench, server=replace(bench.server, options=options))


def main() -> None:
    parser = rig_arguments((__doc__ or "").splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print the figures as one JSON object")
    args, bench, seed = parse_rig_arguments(parser)
    n = args.rounds
    rec = record(bench, n, args.players, seed)
    run, replayed = replay(rec)
    run()
    if [e.kind for e in replayed()] != [e.kind for e in rec.events]:
        sys.exit(f"replaying the engine calls gave {len(replayed())} events, the rig's ledger has {len(rec.events)}")
    identical = replayed() == rec.events
    gc.collect()
    gc.freeze()  # the recording stays out of every later collection (the rig's included)

    parts: dict[str, Callable[[], float]] = {
        "model": lambda: model_run(bench.profile, n, args.players, seed)[0],
        "decode_server": lambda: timed(decode(rec.tx, Decoder)),
        "decode_harness": lambda: timed(decode(rec.rx, FrameDecoder)),
        "encode_harness": lambda: timed(lambda: [harness_encode(f) for _, f in rec.device_frames]),
        "encode_server": lambda: timed(
            lambda: [server_encode(f.seq, f.src, f.type, f.fields) for _, f in rec.server_frames]
        ),
        "engine_ledger": lambda: timed(replay(rec)[0]),
        "rig": lambda: rig_run(bench, n, args.players, seed).seconds,
        "rig_direct": lambda: rig_run(like_floor(bench), n, args.players, seed).seconds,
    }
    best = dict.fromkeys(parts, float("inf"))
    for _ in range(args.repeat):
        for name, part in parts.items():
            best[name] = min(best[name], part())
    us = {name: s / n * 1e6 for name, s in best.items()}
    rig_us = us.pop("rig")
    direct_us = us.pop("rig_direct")
    floor_us = sum(us.values())
    load = os.getloadavg()
    calls = Counter(c.method.__name__ for c in rec.calls)
    figures: dict[str, Any] = {
        "parts_us_per_round": us,
        "floor_us_per_round": floor_us,
        "floor_rounds_per_s": 1e6 / floor_us,
        "rig_us_per_round": rig_us,
        "rig_rounds_per_s": 1e6 / rig_us,
        "rig_over_floor": rig_us / floor_us,
        "rig_direct_us_per_round": direct_us,
        "rig_direct_over_floor": direct_us / floor_us,
        "api_and_ledger_us_per_round": rig_us - direct_us,
        "floor_over_target": floor_us / TARGET_US,
        "per_round": {
            "chunks_dev_to_srv": len(rec.tx) / n,
            "chunks_srv_to_dev": len(rec.rx) / n,
            "frames_dev_to_srv": len(rec.device_frames) / n,
            "frames_srv_to_dev": len(rec.server_frames) / n,
            "engine_calls": {k: v / n for k, v in calls.most_common()},
            "engine_queries": {k: v / n for k, v in rec.queries.most_common()},
            "events": len(rec.events) / n,
        },
        "events_identical": identical,
        "load_average": load,
    }
    if args.json:
        print(json.dumps(figures))
        return
    print(f"bench={bench.name} profile={bench.profile} players={args.players} rounds={n} seed={seed}")
    print(f"  best of {args.repeat}; load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} ({os.cpu_count()} cores)")
    per = figures["per_round"]
    print(
        f"  a round: {per['frames_dev_to_srv']:.1f} frames in {per['chunks_dev_to_srv']:.1f} chunks dev->srv, "
        f"{per['frames_srv_to_dev']:.1f} in {per['chunks_srv_to_dev']:.1f} srv->dev; {per['events']:.1f} engine events"
    )
    print("  engine calls a round: " + ", ".join(f"{k} {v:.1f}" for k, v in per["engine_calls"].items()))
    queries = ", ".join(f"{k} {v:.1f}" for k, v in per["engine_queries"].items()) or "none"
    same = "identical" if identical else "same kinds, not identical"
    print(f"  (queries, not replayed: {queries}); replay = the rig's ledger: {len(rec.events)} events, {same}")
    print(f"  {'part':<34} {'us/round':>9} {'share':>7}")
    for name, label in LABELS.items():
        print(f"  {label:<34} {us[name]:9.1f} {us[name] / floor_us:7.1%}")
    print(f"  {'floor (a+b+c+d)':<34} {floor_us:9.1f} {1:7.1%}   {1e6 / floor_us:8,.0f} rounds/s")
    print(f"  {'rig, api direct, memory ledger':<34} {direct_us:9.1f} {'':7}   {1e6 / direct_us:8,.0f} rounds/s")
    print(f"  {'rig as shipped (bench_rig.rig_run)':<34} {rig_us:9.1f} {'':7}   {1e6 / rig_us:8,.0f} rounds/s")
    print(f"  rig direct / floor   {direct_us / floor_us:6.2f}x  (the bench's plumbing: events, services, timers)")
    api_us = rig_us - direct_us
    print(f"  rig / floor          {rig_us / floor_us:6.2f}x  (the plumbing, and {api_us:,.0f} us a round of the")
    print(f"  {'':21}  server's HTTP API and durable ledger, which the floor's engine and memory ledger leave out)")
    print(f"  floor / target       {floor_us / TARGET_US:6.2f}x  (floor us / {TARGET_US:.0f} us, 2,000 rounds/s)")


if __name__ == "__main__":
    main()
