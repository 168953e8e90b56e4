"""A foreign vendor's table, certified by the kit (``examples/foreign``): Lotus Tables' server, which imports nothing
of the kit, its dialect, its adapter and its bench.

- the server alone, with this test as its table: it dials a controller and a camera this test listens on, opens a
  round on its own timer, takes bets over its own API, and settles on the camera's read for that round, ignoring a
  read below its minimum confidence and a read of another round;
- both dialects (``lotus``, and ``lotus-bin`` for the older, polled controller) through the conformance kit;
- a short certification of the benches ``lotus.yaml`` and ``lotus-bin.yaml``, and of ``lotus.yaml`` with the planted
  payout defect, which fails on PAY-6.
"""

from __future__ import annotations

import http.client
import json
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
FOREIGN = ROOT / "examples" / "foreign"
SERVER = FOREIGN / "lotus_server.py"


def _checksum(text: str) -> str:
    return f"{sum(text.encode('ascii')) % 256:02X}"


def _line(*fields: str) -> bytes:
    body = ";".join(fields) + ";"
    return f"*{body}{_checksum(body)}\r\n".encode("ascii")


class _Table:
    """The table's two device ends, as TCP servers the Lotus server dials."""

    def __init__(self) -> None:
        self.listeners = {name: socket.create_server(("127.0.0.1", 0)) for name in ("controller", "camera")}
        self.conns: dict[str, socket.socket] = {}
        self.buf = {"controller": b"", "camera": b""}
        self.seq = 0

    def address(self, name: str) -> str:
        return f"127.0.0.1:{self.listeners[name].getsockname()[1]}"

    def accept(self) -> None:
        for name, listener in self.listeners.items():
            listener.settimeout(10)
            conn, _ = listener.accept()
            conn.settimeout(0.1)
            self.conns[name] = conn

    def lines(self, name: str) -> list[bytes]:
        try:
            while True:
                data = self.conns[name].recv(4096)
                if not data:
                    break
                self.buf[name] += data
        except TimeoutError:
            pass
        *done, self.buf[name] = self.buf[name].split(b"\n")
        return [d + b"\n" for d in done]

    def wait_for(self, name: str, needle: bytes, timeout: float = 10.0) -> bytes:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for line in self.lines(name):
                if needle in line:
                    return line
        raise AssertionError(f"no line with {needle!r} from the server on the {name} line")

    def event(self, dev: str, code: str, *args: str, round_id: str) -> None:
        self.seq += 1
        self.conns["controller"].sendall(_line("X", "EVT", str(self.seq), dev, code, *args, round_id, "-"))

    def read(self, faces: str, round_id: int | None, confidence: float) -> None:
        self.seq += 1
        obj: dict[str, Any] = {"seq": self.seq, "type": "read", "faces": faces, "overlap": False}
        obj["confidence"] = confidence
        if round_id is not None:
            obj["round"] = round_id
        self.conns["camera"].sendall(json.dumps(obj).encode() + b"\n")

    def close(self) -> None:
        for sock in [*self.conns.values(), *self.listeners.values()]:
            sock.close()


def _call(port: int, method: str, path: str, key: str, body: Any = None) -> tuple[int, dict[str, Any]]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        conn.request(method, path, None if body is None else json.dumps(body), {"X-Lotus-Key": key})
        resp = conn.getresponse()
        return resp.status, json.loads(resp.read())
    finally:
        conn.close()


def _start(table: _Table, tmp_path: Path, *extra: str) -> tuple[subprocess.Popen[str], int]:
    argv = [sys.executable, str(SERVER), "--db", str(tmp_path / "lotus.db"), "--betting-s", "1.0", "--gap-s", "0.2"]
    argv += ["--controller", table.address("controller"), "--camera", table.address("camera"), *extra]
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    line = proc.stdout.readline()
    assert "lotus-xd listening on http://127.0.0.1:" in line, line + (proc.stderr.read() if proc.stderr else "")
    table.accept()
    return proc, int(line.rsplit(":", 1)[1])


def _stop(proc: subprocess.Popen[str]) -> None:
    proc.terminate()
    assert proc.wait(timeout=10) == 0  # SIGTERM is a clean shutdown


def test_the_server_settles_on_the_read_of_its_round_at_its_own_odds(tmp_path: Path) -> None:
    table = _Table()
    proc, port = _start(table, tmp_path)
    try:
        sup = "lotus-supervisor"
        players = [{"name": "ann", "key": "k-ann", "balance_cents": 10_000}]
        assert _call(port, "POST", "/api/admin/players", sup, {"players": players})[0] == 201
        opened = table.wait_for("controller", b";LAMP;OPEN;")
        fields = opened.decode().rstrip("\r\n")[1:].split(";")
        assert _checksum(";".join(fields[:-1]) + ";") == fields[-1]  # the server's line carries a good checksum
        rid = fields[5]
        bets = [("b1", "QUAD", 1000), ("b2", "RED4", 500), ("b3", "BIG", 1000), ("b4", "ODD", 1000)]
        for ref, pick, cents in bets:
            status, reply = _call(port, "POST", "/api/bets", "k-ann", {"ref": ref, "pick": pick, "cents": cents})
            assert status == 201, reply
        status, again = _call(port, "POST", "/api/bets", "k-ann", {"ref": "b1", "pick": "QUAD", "cents": 1000})
        assert (status, again["replay"]) == (200, True)  # idempotent by the client's ref
        status, off = _call(port, "POST", "/api/bets", "k-ann", {"ref": "b5", "pick": "ODD", "cents": 1010})
        assert (status, off["err"]) == (409, "L-CHIP")
        table.event("BOWL", "ON", round_id=rid)
        table.event("SHAKE", "START", round_id=rid)
        table.event("SHAKE", "END", round_id=rid)
        table.wait_for("controller", b";LAMP;CLOSE;" + rid.encode())
        table.event("BOWL", "OFF", "0", "-", round_id=rid)
        time.sleep(0.2)
        table.read("WWWW", int(rid), 0.5)  # below the minimum confidence (0.9): ignored
        table.read("WWWW", int(rid) + 7, 0.99)  # another round's read: ignored
        table.read("WWWW", None, 0.99)  # an untagged read: ignored
        table.read("RRRR", int(rid), 0.97)
        deadline = time.monotonic() + 10
        record: list[dict[str, Any]] = []
        while time.monotonic() < deadline:
            record = _call(port, "GET", "/api/admin/players/ann/bets", sup)[1]["bets"]
            if record and all(r["result"] != "pending" for r in record):
                break
            time.sleep(0.1)
        got = [(r["pick"], r["result"], r["returned"], r["faces"]) for r in record]
        # QUAD 6.5 to 1, RED4 14 to 1, BIG 0.96 to 1 win on four reds; ODD loses
        assert got == [
            ("QUAD", "win", 7500, "RRRR"),
            ("RED4", "win", 7500, "RRRR"),
            ("BIG", "win", 1960, "RRRR"),
            ("ODD", "lose", 0, "RRRR"),
        ]
        assert _call(port, "GET", "/api/admin/players/ann/balance", sup)[1]["balance_cents"] == 10_000 - 3500 + 16_960
        health = _call(port, "GET", "/api/health", sup)[1]["ignored_reports"]
        assert health == {"camera:confidence below minimum": 1, "camera:other round": 1, "camera:untagged read": 1}
    finally:
        _stop(proc)
        table.close()


@pytest.mark.parametrize("dialect", ["lotus_dialect:LotusDialect", "lotus_bin_dialect:LotusBinDialect"])
def test_the_dialects_pass_the_conformance_kit(dialect: str) -> None:
    cmd = [sys.executable, "-m", "harness.cli", "dialects", "check", dialect, "--no-certify"]
    env = {"PYTHONPATH": f"{FOREIGN}:{ROOT}", "PATH": "/usr/bin:/bin"}
    done = subprocess.run(cmd, cwd=FOREIGN, capture_output=True, text=True, timeout=120, env=env, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "conformance: PASS" in done.stdout


def _certify(
    folder: Path, bench: str, tags: str, report: Path
) -> tuple[subprocess.CompletedProcess[str], dict[str, Any]]:
    cmd = [sys.executable, "-m", "harness.cli", "certify", "--bench", bench, "--features", "shipped"]
    cmd += ["--tags", tags, "--no-bench-check", "--report", str(report)]
    done = subprocess.run(cmd, cwd=folder, capture_output=True, text=True, timeout=300, check=False)
    path = report / "clause-matrix.json"
    assert path.is_file(), f"certify wrote no clause matrix (exit {done.returncode}):\n{done.stdout[-3000:]}"
    matrix = json.loads(path.read_text(encoding="utf-8"))
    return done, matrix


def _outcomes(matrix: dict[str, Any], clause: str) -> list[str]:
    return [r["outcome"] for r in matrix["clauses"][clause]]


@pytest.mark.parametrize(
    ("bench", "plant"),
    [("lotus.yaml", None), ("lotus.yaml", "payout-quad-at-6.patch"), ("lotus-bin.yaml", None)],
)
def test_certify_passes_the_lotus_table_and_fails_it_with_a_planted_payout_defect(
    tmp_path: Path, bench: str, plant: str | None
) -> None:
    folder = tmp_path / "foreign"
    shutil.copytree(FOREIGN, folder, ignore=shutil.ignore_patterns("__pycache__"))
    if plant is not None:
        patch = (folder / "plants" / plant).read_text(encoding="utf-8")
        subprocess.run(["patch", "-p1"], input=patch, cwd=folder, check=True, capture_output=True, text=True)
    done, matrix = _certify(folder, bench, "clause:PAY-6", tmp_path / "report")
    if plant is None:
        assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-1000:]
        assert set(_outcomes(matrix, "PAY-6")) == {"passed"}, done.stdout[-3000:]
    else:
        assert done.returncode != 0
        assert "failed" in _outcomes(matrix, "PAY-6"), done.stdout[-3000:]


@pytest.mark.parametrize("clause", ["DEV-3", "SH-5"])
def test_certify_passes_the_polled_binary_table_on_what_its_framing_once_broke(tmp_path: Path, clause: str) -> None:
    """On lotus-bin, whose controller events carry no round. DEV-3: the dialect forges frames into its replies to
    the server's polls (several since the last poll go as one burst) and the vendor refuses them and serves the
    table; it failed on a master that read one frame a poll (hundreds of polls behind), on a read dropped 0.5 s
    before the lift's report got through the burst (no result in time), and on the step's noise of "another
    round", which on an untagged line is a real bowl-off with a touch (the round voided SH-5). SH-5: the bowl-off's
    touch flag is a byte 0 or 1; a server that read it as the text digit never saw a touch and settled."""
    folder = tmp_path / "foreign"
    shutil.copytree(FOREIGN, folder, ignore=shutil.ignore_patterns("__pycache__"))
    done, matrix = _certify(folder, "lotus-bin.yaml", f"clause:{clause}", tmp_path / "report")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-1000:]
    outcomes = _outcomes(matrix, clause)
    assert outcomes and set(outcomes) == {"passed"}, done.stdout[-3000:]
