"""Benchmark: hostile device frames the reference server absorbs, and what they cost it.

    python benchmarks/bench_gateway.py [--frames 1000000] [--rate-frames 100000] [--json]

Hostile frames are valid (CRC-correct) frames that must change nothing: a ``READER RESULT`` sent on another
device's line (refused ``wrong_line``), an untagged ``READER RESULT`` (refused ``untagged``), reports tagged
with a round that is not in progress (ignored ``other_round``), each with a fresh sequence number.

1. Rate, in this process: the server's codec decodes ``--rate-frames`` such frames (frames/s); then a
   :class:`~gameserver.gateway.DeviceGateway` thread reads the same bytes from an in-memory port, acknowledges,
   checks and traces every frame (frames/s absorbed per line). Printed: both and their ratio.
2. Cost, against a real ``xocdia-server`` process with its five lines on real ptys: ``--frames`` hostile frames
   spread over the lines (the bench reads and drops the server's ACKs), until the server has counted every one
   (``/health``). Printed: its RSS and its database size (with the WAL) before and after; targets: RSS growth
   < 10 MB, database growth < 1 MB.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import select
import subprocess
import sys
import tempfile
import threading
import time
import tty
from pathlib import Path
from typing import Any

import yaml

from gameserver.events import TableReport
from gameserver.gateway import DeviceGateway
from gameserver.protocol import Decoder, Frame, encode

SUPERVISOR = "bench-supervisor"
LINES = ("bowl", "shaker", "reader", "console", "lamp")
TARGET_RSS_MB = 10.0
TARGET_DB_MB = 1.0


def hostile(line: str, seq: int) -> bytes:
    """One hostile frame for ``line`` (cycling through the kinds by ``seq``)."""
    seq = seq % 65535 + 1
    result = (("faces", "RRRR"), ("overlap", "0"))
    if line == "reader":
        tag = () if seq % 2 else (("round", "999999"),)
        return encode(seq, "READER", "RESULT", (*result, *tag))
    if line == "bowl" and seq % 2:
        return encode(seq, "BOWL", "OFF", (("touch", "0"), ("token", "-"), ("round", "999999")))
    if line == "shaker" and seq % 2:
        return encode(seq, "SHAKER", "START", (("round", "999999"),))
    return encode(seq, "READER", "RESULT", (*result, ("round", "1")))  # on a line that is not the reader's


class _MemoryPort:
    """A device port that yields ``data`` as it is asked for, then nothing; records when it ran dry."""

    def __init__(self, data: bytes) -> None:
        self.data, self.pos, self.done = data, 0, threading.Event()

    @property
    def in_waiting(self) -> int:
        """Bytes ready to read, as a pyserial port reports them (the gateway reads one byte, then what waits)."""
        return len(self.data) - self.pos

    def read(self, size: int) -> bytes:
        if self.pos >= len(self.data):
            self.done.set()
            time.sleep(0.001)
            return b""
        out = self.data[self.pos : self.pos + size]
        self.pos += len(out)
        return out

    def write(self, data: bytes) -> int:
        return len(data)

    def close(self) -> None:
        pass


def rates(n: int) -> dict[str, float]:
    """Codec decode rate and gateway absorption rate (frames/s) on the same ``n`` hostile frames."""
    blob = b"".join(hostile("console", i) for i in range(n))
    start = time.perf_counter()
    decoded = sum(1 for item in Decoder().feed(blob) if isinstance(item, Frame))
    decode_s = time.perf_counter() - start
    assert decoded == n, decoded
    reports: list[TableReport] = []
    port = _MemoryPort(blob)
    with open(os.devnull, "w") as trace:
        gateway = DeviceGateway({"console": port}, reports.append, trace=trace)
        start = time.perf_counter()
        gateway.start()
        port.done.wait(600)
        absorb_s = time.perf_counter() - start
        gateway.stop()
    assert not reports and gateway.guards["console"].counts["wrong_line"] == n
    return {"decode_frames_s": n / decode_s, "gateway_frames_s": n / absorb_s, "ratio": decode_s / absorb_s}


def _drain(fds: list[int], stop: threading.Event) -> None:
    """Read and drop whatever the server writes to the device ends (ACKs, HBs, lamp commands)."""
    while not stop.is_set():
        ready, _, _ = select.select(fds, [], [], 0.05)
        for fd in ready:
            try:
                os.read(fd, 65536)
            except OSError:
                return


def _get(port: int, path: str) -> Any:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        conn.request("GET", path, headers={"Authorization": f"Bearer {SUPERVISOR}"})
        return json.loads(conn.getresponse().read())
    finally:
        conn.close()


def _counted(health: dict[str, Any]) -> int:
    refused = sum(sum(d.get("rejected", {}).values()) for d in health.get("devices", {}).values())
    ignored = health["ignored_reports"]["counts"]
    return refused + sum(n for kinds in ignored.values() for whys in kinds.values() for n in whys.values())


def _rss_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("VmRSS:")) / 1024


def _db_mb(db: Path) -> float:
    return sum(p.stat().st_size for p in db.parent.glob(db.name + "*") if p.is_file()) / 2**20


def cost(n: int, directory: Path) -> dict[str, float]:
    """RSS and database size of a real server before and after ``n`` hostile frames on its pty lines."""
    ends = {name: os.openpty() for name in LINES}
    for master, slave in ends.values():
        tty.setraw(master)
        tty.setraw(slave)
    config = directory / "server.yaml"
    config.write_text(
        yaml.safe_dump(
            {
                "engine": {"betting_s": 3600, "round_gap_s": 0.1},
                "players": [{"id": "p0", "token": "bench-player-0", "balance": 10**9}],
                "supervisors": [{"id": "boss", "token": SUPERVISOR}],
                "heartbeat_timeout_s": 3600,
            }
        )
    )
    db = directory / "ledger.db"
    cmd = [sys.executable, "-m", "gameserver.cli", "--db", str(db), "--port", "0", "--config", str(config)]
    cmd += ["--trace", os.devnull]
    for name, (_, slave) in ends.items():
        cmd += ["--device", f"{name}={os.ttyname(slave)}"]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True)
    stop = threading.Event()
    drainer = threading.Thread(target=_drain, args=([m for m, _ in ends.values()], stop), daemon=True)
    drainer.start()
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        port = int(line.rsplit(":", 1)[1])
        time.sleep(1.0)
        _get(port, "/health")
        rss0, db0 = _rss_mb(proc.pid), _db_mb(db)
        start = time.perf_counter()
        per_line = n // len(LINES)
        batch = 2000
        for first in range(0, per_line, batch):
            for name, (master, _) in ends.items():
                data = b"".join(hostile(name, i) for i in range(first, min(first + batch, per_line)))
                view = memoryview(data)
                while view:
                    _, ready, _ = select.select([], [master], [], 1.0)
                    if ready:
                        view = view[os.write(master, view[:4096]) :]
        deadline = time.monotonic() + 600
        while _counted(_get(port, "/health")) < per_line * len(LINES) and time.monotonic() < deadline:
            time.sleep(0.2)
        elapsed = time.perf_counter() - start
        health = _get(port, "/health")
        counted = _counted(health)
        rss1, db1 = _rss_mb(proc.pid), _db_mb(db)
        events = len(_get(port, "/v1/events?limit=10000")["events"])
    finally:
        stop.set()
        proc.terminate()
        proc.wait(timeout=10)
        for master, slave in ends.values():
            os.close(master)
            os.close(slave)
    return {
        "frames": per_line * len(LINES),
        "counted": counted,
        "seconds": elapsed,
        "rss_before_mb": rss0,
        "rss_after_mb": rss1,
        "db_before_mb": db0,
        "db_after_mb": db1,
        "events_in_ledger": events,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--frames", type=int, default=1_000_000)
    parser.add_argument("--rate-frames", type=int, default=100_000)
    parser.add_argument("--dir", default=None, help="directory for the database, created if missing (default: here)")
    parser.add_argument("--json", action="store_true", help="print the figures as one JSON object")
    args = parser.parse_args()
    speed = rates(args.rate_frames)
    base = Path(args.dir) if args.dir else Path.cwd()
    base.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="bench-gateway-", dir=base) as tmp:
        spent = cost(args.frames, Path(tmp))
    rss_growth = spent["rss_after_mb"] - spent["rss_before_mb"]
    db_growth = spent["db_after_mb"] - spent["db_before_mb"]
    ok = rss_growth < TARGET_RSS_MB and db_growth < TARGET_DB_MB and spent["counted"] == spent["frames"]
    if args.json:
        print(json.dumps({**speed, **spent, "rss_growth_mb": rss_growth, "db_growth_mb": db_growth, "ok": ok}))
        return 0 if ok else 1
    print(f"codec decode: {speed['decode_frames_s']:,.0f} frames/s")
    print(f"gateway absorbs (one line): {speed['gateway_frames_s']:,.0f} frames/s = {speed['ratio']:.2f} of decode")
    print(
        f"server, {spent['frames']:,} hostile frames on {len(LINES)} pty lines in {spent['seconds']:.1f} s "
        f"({spent['frames'] / spent['seconds']:,.0f}/s), counted {spent['counted']:,}"
    )
    print(
        f"  RSS {spent['rss_before_mb']:.1f} -> {spent['rss_after_mb']:.1f} MB "
        f"(growth {rss_growth:+.1f} MB, target < {TARGET_RSS_MB:.0f})"
    )
    print(
        f"  database {spent['db_before_mb']:.3f} -> {spent['db_after_mb']:.3f} MB "
        f"(growth {db_growth:+.3f} MB, target < {TARGET_DB_MB:.0f}); events in the ledger: {spent['events_in_ledger']}"
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
