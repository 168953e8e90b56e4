"""A ``url`` bench whose device ends listen (``devices.urls.LINE: listen://HOST:PORT``): the bench file's validation,
``bench check`` binding each address, and the reference server process dialling every line (``--device
NAME=socket://HOST:BOUNDPORT``) while ``xocdia-hil certify`` runs a scenario on them."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from harness.bench.config import BenchError, load_bench
from harness.bench.rig import Rig
from harness.wire.transports.listen import ListenPort

LINES = ("bowl", "shaker", "reader", "lamp", "console")
ANY_PORT = "listen://127.0.0.1:0"


def _doc(urls: dict[str, str], kind: str = "command") -> dict[str, Any]:
    """A bench like local-hil (the reference server as a process), its lines on ``urls``."""
    server: dict[str, Any] = {"kind": kind}
    if kind == "url":
        server["url"] = "http://127.0.0.1:9"
    return {
        "name": "listen-hil",
        "server": server,
        "devices": {"transport": "url", "urls": urls, "reader_latency_s": 0.1, "line": {"baud": 115200}},
        "profile": "certification",
        "seed": 20261130,
        "timing": {"betting_s": 1.0, "round_gap_s": 0.05, "result_timeout_s": 5.0, "step_timeout_s": 20.0},
    }


def _write(tmp_path: Path, doc: dict[str, Any]) -> Path:
    path = tmp_path / "bench.yaml"
    path.write_text(yaml.safe_dump(doc), encoding="utf-8")
    return path


def _urls(**lines: str) -> dict[str, str]:
    return {name: lines.get(name, ANY_PORT) for name in LINES}


def _cli(*args: str, cwd: Path, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-m", "harness.cli", *args]
    return subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=timeout, check=False)


@pytest.fixture
def busy_port() -> Iterator[int]:
    """A loopback port something else listens on."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen(1)
        yield s.getsockname()[1]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
    return port


# ---------------------------------------------------------------------------------------------- the bench file
def test_lines_that_listen_and_lines_that_dial_mix_on_one_bench(tmp_path: Path) -> None:
    urls = _urls(lamp="listen://0.0.0.0:4004", console="socket://127.0.0.1:4005", reader="/dev/ttyUSB2")
    bench = load_bench(_write(tmp_path, _doc(urls)))
    assert bench.device_urls == urls


@pytest.mark.parametrize(
    ("url", "why"),
    [
        ("listen://127.0.0.1", "no port"),
        ("listen://:4001", "the host or the port is malformed"),
        ("listen://lab host:4001", "the host or the port is malformed"),
        ("listen://127.0.0.1:70000", "port 70000 is out of range"),
    ],
)
def test_a_bad_listen_address_names_the_line_and_the_allowed_forms(tmp_path: Path, url: str, why: str) -> None:
    with pytest.raises(BenchError) as err:
        load_bench(_write(tmp_path, _doc(_urls(shaker=url))))
    assert str(err.value) == (
        f"bench.yaml: devices.urls.shaker: {why}; must be listen://HOST:PORT (HOST a name or an IPv4 address, an IPv6"
        " address in [brackets]; PORT 0-65535, 0: any free port) or a pyserial URL (socket://HOST:PORT,"
        f" rfc2217://HOST:PORT, /dev/ttyUSB0); got {url!r}"
    )


def test_port_0_needs_a_bench_that_tells_the_server_the_port(tmp_path: Path) -> None:
    fixed = {name: f"listen://127.0.0.1:{4001 + i}" for i, name in enumerate(LINES)}
    assert load_bench(_write(tmp_path, _doc(fixed, kind="url"))).device_urls == fixed  # fixed ports: any kind
    with pytest.raises(BenchError, match=r"^bench\.yaml: devices\.urls\.bowl: port 0 \(any free port\) only when"):
        load_bench(_write(tmp_path, _doc(fixed | {"bowl": ANY_PORT}, kind="url")))
    assert load_bench(_write(tmp_path, _doc(_urls()))).server.kind == "command"  # port 0 on every line


@pytest.mark.parametrize("other", ["127.0.0.1", "0.0.0.0"])
def test_two_lines_cannot_listen_on_one_address(tmp_path: Path, other: str) -> None:
    urls = _urls(bowl="listen://127.0.0.1:4001", lamp=f"listen://{other}:4001", reader="listen://127.0.0.2:4001")
    with pytest.raises(BenchError, match=r"devices\.urls\.lamp: listens on the same address as devices\.urls\.bowl"):
        load_bench(_write(tmp_path, _doc(urls)))


# ---------------------------------------------------------------------------------------------- bench check
def test_bench_check_binds_each_listen_address_and_reports_a_busy_one_in_one_line(
    tmp_path: Path, busy_port: int
) -> None:
    free = _free_port()
    urls = _urls(bowl=f"listen://127.0.0.1:{busy_port}", shaker=f"listen://127.0.0.1:{free}")
    done = _cli("bench", "check", str(_write(tmp_path, _doc(urls))), cwd=tmp_path)
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stderr.splitlines() == [
        f"bench listen-hil: line bowl (listen://127.0.0.1:{busy_port}): cannot listen on 127.0.0.1:{busy_port}"
        " (Address already in use)"
    ]
    assert f"ok: line shaker (listen://127.0.0.1:{free})" in done.stdout
    assert "ok: line lamp (listen://127.0.0.1:0)" in done.stdout
    port = ListenPort("after", "127.0.0.1", free)  # the check released what it bound
    port.close()


# ---------------------------------------------------------------------------------------------- a real server
def test_the_server_process_dials_every_line_at_the_port_bound(tmp_path: Path) -> None:
    bench = load_bench(_write(tmp_path, _doc(_urls())))
    with Rig.build(bench, {"p1": 100_000}) as rig:
        ends = {name: end for name in LINES if isinstance(end := rig.lines[name], ListenPort)}
        assert list(ends) == list(LINES)  # every device end listens
        deadline = time.monotonic() + 10.0
        while not all(end.connected for end in ends.values()) and time.monotonic() < deadline:
            for end in ends.values():
                end.tick(0.0)
            time.sleep(0.01)
        assert {name: end.connected for name, end in ends.items()} == dict.fromkeys(LINES, True)
        assert all(end.port > 0 and end.refused == 0 for end in ends.values())


def test_certify_runs_a_scenario_on_a_bench_whose_lines_all_listen(tmp_path: Path) -> None:
    bench = _write(tmp_path, _doc(_urls()))
    done = _cli("certify", "--bench", str(bench), "--tags", "clause:PAY-1", "--report", "r", cwd=tmp_path)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    matrix = json.loads((tmp_path / "r" / "clause-matrix.json").read_text(encoding="utf-8"))
    assert (matrix["passed"], matrix["failed"]) == (5, 0), done.stdout[-3000:]
    assert matrix["results"]["PAY-1"] == {"result": "PASS"}
    assert {r["outcome"] for r in matrix["clauses"]["PAY-1"]} == {"passed"}
