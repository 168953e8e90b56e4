"""Benchmark: accepted bets per second over loopback HTTP, against this process's raw SQLite commit rate.

    python benchmarks/bench_server.py [--clients 64] [--seconds 5] [--dir DIR]

1. Raw rate: in this process, on the same directory (disk) the server's database will use, one-row
   INSERT transactions with the server's settings (WAL, synchronous=FULL), as many as fit in ``--seconds``.
2. Server rate: a real ``xocdia-server`` process on loopback; ``--clients`` concurrent keep-alive HTTP/1.1
   connections each post bets back to back for ``--seconds``; only 201 (confirmed = committed) counts.
3. Printed: both rates, the ratio bets/raw (target >= 0.30) and bets/2000 (target >= 1.0). The accepted count
   is checked against the server's own record of the round. For information, the CPU time per accepted bet of
   the server process (all its threads; Linux only) and of this client over the load phase, and the load
   average: on a shared machine the rates follow the CPU the processes get, the CPU per bet much less.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections.abc import Coroutine
from pathlib import Path
from typing import Any, TypeVar

import yaml

T = TypeVar("T")
TARGET_BETS_S = 2000
TARGET_RATIO = 0.30
BET_TYPES = ["odd", "even", "big", "small", "four_red", "three_red", "two_red", "one_red", "four_white"]


def raw_commit_rate(directory: Path, seconds: float) -> float:
    """One-row transactions per second with WAL + synchronous=FULL in ``directory``."""
    path = directory / "raw.db"
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=FULL")
    db.execute("CREATE TABLE t(id INTEGER PRIMARY KEY, payload TEXT NOT NULL)")
    n = 0
    start = time.perf_counter()
    while (elapsed := time.perf_counter() - start) < seconds:
        db.execute("BEGIN IMMEDIATE")
        db.execute("INSERT INTO t(payload) VALUES (?)", ("x" * 120,))
        db.execute("COMMIT")
        n += 1
    db.close()
    return n / elapsed


def process_cpu_s(pid: int) -> float | None:
    """User + system CPU seconds of process ``pid`` so far (from /proc; None where there is none)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def start_server(directory: Path, players: int) -> tuple[subprocess.Popen[str], int]:
    config = {
        "engine": {"betting_s": 3600, "max_stake": 1_000_000},
        "players": [{"id": f"p{i}", "token": f"bench-token-{i:04d}", "balance": 10**12} for i in range(players)],
        "supervisors": [{"id": "boss", "token": "bench-supervisor"}],
    }
    (directory / "bench.yaml").write_text(yaml.safe_dump(config))
    cmd = [sys.executable, "-m", "gameserver.cli", "--db", str(directory / "server.db"), "--port", "0"]
    cmd += ["--config", str(directory / "bench.yaml")]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    line = proc.stdout.readline()  # bounded: the server prints this line or exits
    if "listening on" not in line:
        proc.kill()
        raise SystemExit(f"server did not start: {line!r}")
    return proc, int(line.strip().rsplit(":", 1)[1])


async def _request(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, raw: bytes) -> tuple[int, bytes]:
    writer.write(raw)
    head = await reader.readuntil(b"\r\n\r\n")
    status = int(head[9:12])
    length = 0
    for line in head.split(b"\r\n"):
        if line.lower().startswith(b"content-length:"):
            length = int(line.split(b":", 1)[1])
    return status, await reader.readexactly(length)


def _post(port: int, token: str, body: dict[str, object]) -> bytes:
    data = json.dumps(body).encode()
    return (
        f"POST /v1/bets HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAuthorization: Bearer {token}\r\n"
        f"Content-Type: application/json\r\nContent-Length: {len(data)}\r\n\r\n"
    ).encode() + data


async def client(port: int, index: int, players: int, stop_at: float, counts: list[int]) -> None:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    token = f"bench-token-{index % players:04d}"
    n = 0
    while time.perf_counter() < stop_at:
        body = {"client_bet_id": f"c{index}-{n}", "bet_type": BET_TYPES[n % len(BET_TYPES)], "stake": 100}
        status, reply = await _request(reader, writer, _post(port, token, body))
        if status == 201:
            counts[0] += 1
        else:
            counts[1] += 1
            if counts[1] < 3:
                print(f"  rejected: {status} {reply[:200]!r}", file=sys.stderr)
        n += 1
    writer.close()


async def load(port: int, clients: int, players: int, seconds: float) -> tuple[int, int, float]:
    counts = [0, 0]
    start = time.perf_counter()
    await asyncio.wait_for(
        asyncio.gather(*(client(port, i, players, start + seconds, counts) for i in range(clients))),
        timeout=seconds + 30,
    )
    return counts[0], counts[1], time.perf_counter() - start


def server_bet_count(port: int) -> int:
    async def ask() -> int:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        raw = "GET /v1/rounds/current HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer bench-supervisor\r\n\r\n"
        _, body = await _request(reader, writer, raw.encode())
        writer.close()
        return int(json.loads(body)["bets"])

    return _run(asyncio.wait_for(ask(), 10))


def _run(coro: Coroutine[Any, Any, T]) -> T:
    """Run on uvloop when available (the client must not be the bottleneck)."""
    try:
        import uvloop
    except ImportError:
        return asyncio.run(coro)
    return uvloop.run(coro)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=64)
    parser.add_argument("--players", type=int, default=64)
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--dir", default=None, help="directory for the databases, created if missing (default: here)")
    args = parser.parse_args()
    base = Path(args.dir) if args.dir else Path.cwd()
    base.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="bench-server-", dir=base) as tmp:
        directory = Path(tmp)
        raw = raw_commit_rate(directory, args.seconds)
        proc, port = start_server(directory, args.players)
        try:
            time.sleep(0.5)
            server_cpu, client_cpu = process_cpu_s(proc.pid), time.process_time()
            accepted, rejected, elapsed = _run(load(port, args.clients, args.players, args.seconds))
            client_cpu = time.process_time() - client_cpu
            if server_cpu is not None and (now := process_cpu_s(proc.pid)) is not None:
                server_cpu = now - server_cpu
            recorded = server_bet_count(port)
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=10)
    rate = accepted / elapsed
    print(f"disk: {base} (cpus: {os.cpu_count()})")
    print(f"raw SQLite commits/s (WAL, synchronous=FULL, 1 row per transaction): {raw:,.0f}")
    print(f"accepted bets/s over loopback HTTP ({args.clients} clients, {elapsed:.1f} s): {rate:,.0f}")
    print(f"  accepted {accepted}, rejected {rejected}, recorded by the server {recorded}")
    per_bet = 1e6 / max(accepted, 1)
    server_part = "n/a" if server_cpu is None else f"{server_cpu * per_bet:,.0f} us"
    print(f"  CPU per accepted bet: server {server_part}, client {client_cpu * per_bet:,.0f} us", end="")
    print("" if not hasattr(os, "getloadavg") else f"; load average {os.getloadavg()[0]:.2f}")
    print(f"ratio bets/raw commits: {rate / raw:.2f} (target >= {TARGET_RATIO:.2f})")
    print(f"ratio bets/{TARGET_BETS_S}: {rate / TARGET_BETS_S:.2f} (target >= 1.00)")
    if recorded != accepted:
        print("ERROR: the server's record disagrees with the confirmed count", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
