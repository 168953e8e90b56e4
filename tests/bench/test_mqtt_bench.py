"""A ``url`` bench whose device lines are on an MQTT broker (``devices.urls.LINE: mqtt://HOST:PORT/PREFIX``), against a
real mosquitto process: the bench file's validation, the error that names the ``mqtt`` extra, ``bench check``
reaching the broker, and ``xocdia-hil certify`` running scenarios with the reference server process on the same
broker (``--device NAME=mqtt://HOST:PORT/PREFIX/NAME``)."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from paho.mqtt.client import Client
from paho.mqtt.enums import CallbackAPIVersion

from harness.bench.config import BenchError, load_bench
from tests.wire.transports.mosquitto import Broker, free_port, running_broker

LINES = ("bowl", "shaker", "reader", "lamp", "console")
PREFIX = "studio-7/table-3"


@pytest.fixture
def broker(tmp_path: Path) -> Iterator[Broker]:
    yield from running_broker(tmp_path)


def _doc(urls: dict[str, str]) -> dict[str, Any]:
    """A bench like local-hil (the reference server as a process), its lines on ``urls``."""
    return {
        "name": "mqtt-hil",
        "server": {"kind": "command"},
        "devices": {"transport": "url", "urls": urls, "reader_latency_s": 0.1, "line": {"baud": 115200}},
        "profile": "certification",
        "seed": 20261202,
        "timing": {"betting_s": 1.0, "round_gap_s": 0.05, "result_timeout_s": 5.0, "step_timeout_s": 20.0},
    }


def _write(tmp_path: Path, doc: dict[str, Any]) -> Path:
    path = tmp_path / "bench.yaml"
    path.write_text(yaml.safe_dump(doc), encoding="utf-8")
    return path


def _urls(base: str, **lines: str) -> dict[str, str]:
    return {name: lines.get(name, f"{base}/{PREFIX}") for name in LINES}


def _cli(*args: str, cwd: Path, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-m", "harness.cli", *args]
    return subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=timeout, check=False)


# ---------------------------------------------------------------------------------------------- the bench file
def test_mqtt_lines_mix_with_other_lines_on_one_bench(tmp_path: Path) -> None:
    urls = _urls("mqtt://broker.lab:1883", lamp="socket://127.0.0.1:4005", console="listen://127.0.0.1:0")
    assert load_bench(_write(tmp_path, _doc(urls))).device_urls == urls


def test_a_bad_mqtt_url_names_the_line_and_the_form(tmp_path: Path) -> None:
    url = "mqtt://broker.lab:1883/studio/#"
    with pytest.raises(BenchError) as err:
        load_bench(_write(tmp_path, _doc(_urls("mqtt://broker.lab:1883", reader=url))))
    assert str(err.value) == (
        "bench.yaml: devices.urls.reader: the topic prefix has a wildcard (+ or #) or a query; must be"
        " mqtt://HOST:PORT/PREFIX (HOST a name or an IPv4 address, an IPv6 address in [brackets]; PORT 1-65535; PREFIX"
        f" topic levels joined by /, none empty, without + or #); got {url!r}"
    )


def test_without_paho_mqtt_an_mqtt_bench_names_the_extra(tmp_path: Path) -> None:
    bench = _write(tmp_path, _doc(_urls("mqtt://127.0.0.1:1883")))
    code = (
        "import sys; sys.modules['paho'] = None\n"  # as if paho-mqtt were not installed: find_spec finds nothing
        "from harness.cli import main\n"
        f"sys.exit(main(['bench', 'check', {str(bench)!r}]))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2, done.stdout + done.stderr
    assert (
        "bench.yaml: devices.urls.bowl (mqtt://127.0.0.1:1883/studio-7/table-3) needs paho-mqtt, not installed:"
        " pip install 'xocdia-hil[mqtt]'" in done.stderr
    )


# ---------------------------------------------------------------------------------------------- bench check
def test_bench_check_reports_an_unreachable_broker_in_one_line(tmp_path: Path) -> None:
    port = free_port()
    urls = _urls(f"mqtt://127.0.0.1:{port}", lamp="socket://127.0.0.1:9", console="socket://127.0.0.1:9")
    done = _cli("bench", "check", str(_write(tmp_path, _doc(urls))), "--timeout", "2", cwd=tmp_path)
    assert done.returncode == 2, done.stdout + done.stderr
    mqtt_problems = [line for line in done.stderr.splitlines() if "mqtt://" in line]
    assert mqtt_problems == [
        f"bench mqtt-hil: line {name} (mqtt://127.0.0.1:{port}/{PREFIX}): cannot reach the MQTT broker at"
        f" 127.0.0.1:{port} (Connection refused)"
        for name in ("bowl", "shaker", "reader")
    ]


def test_bench_check_connects_each_line_to_a_running_broker(tmp_path: Path, broker: Broker) -> None:
    done = _cli("bench", "check", str(_write(tmp_path, _doc(_urls(broker.url)))), cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    for name in LINES:
        assert f"ok: line {name} ({broker.url}/{PREFIX})" in done.stdout


# ---------------------------------------------------------------------------------------------- a real server
def test_certify_runs_scenarios_with_every_line_on_the_broker(tmp_path: Path, broker: Broker) -> None:
    bench = _write(tmp_path, _doc(_urls(broker.url)))
    topics: set[str] = set()  # every topic a message went on under the prefix, seen by a client of the broker
    spy = Client(CallbackAPIVersion.VERSION2, client_id="spy")
    spy.on_message = lambda client, userdata, message: topics.add(message.topic)
    spy.connect("127.0.0.1", broker.port)
    spy.subscribe(f"{PREFIX}/#", qos=1)
    spy.loop_start()
    try:
        done = _cli("certify", "--bench", str(bench), "--tags", "clause:PAY-1", "--report", "r", cwd=tmp_path)
    finally:
        spy.disconnect()
        spy.loop_stop()
    assert topics == {f"{PREFIX}/{name}/{way}" for name in LINES for way in ("up", "down")}  # every line, both ways
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    matrix = json.loads((tmp_path / "r" / "clause-matrix.json").read_text(encoding="utf-8"))
    assert (matrix["passed"], matrix["failed"]) == (5, 0), done.stdout[-3000:]
    assert matrix["results"]["PAY-1"] == {"result": "PASS"}
    assert {r["outcome"] for r in matrix["clauses"]["PAY-1"]} == {"passed"}
