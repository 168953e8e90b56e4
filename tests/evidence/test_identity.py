"""The system under test's identification (``harness.evidence.identity``, ``gameserver.identity``): a real server
process asked over HTTP, the in-process bench both ways (its API and direct), a copied server package with one file
changed under a running server, the lab's own files hashed by the kit, and a foreign bench whose adapter has no
``identify()``. Expected digests are computed here with hashlib from the files themselves."""

from __future__ import annotations

import compileall
import hashlib
import http.server
import json
import os
import re
import shutil
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import simpy
import yaml

import gameserver
from harness.bench.adapters.base import ServerSetup
from harness.bench.adapters.reference_http import HttpAdapter
from harness.bench.adapters.reference_inprocess import InProcessAdapter
from harness.bench.config import BenchError, load_bench
from harness.bench.rig import Rig
from harness.errors import AdapterError, InputError
from harness.evidence.identity import (
    NOT_IDENTIFIED,
    Component,
    Identification,
    device_components,
    identify_adapter,
    identify_bench,
    identify_rig,
    identity_changes,
)
from tests.support.gs_process import PLAYERS, SUPERVISOR_TOKEN, ServerProcess, write_config

PACKAGE = Path(gameserver.__file__).resolve().parent
FOREIGN = Path(__file__).resolve().parents[2] / "examples" / "foreign"
LINES = ("bowl", "shaker", "reader", "lamp", "console")


def _sha(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def _files_of(root: Path) -> dict[str, str]:
    """Every file of the package under ``root`` but the bytecode caches, by ``gameserver/...`` path, hashed here."""
    out = {}
    for folder, dirs, names in os.walk(root):
        dirs[:] = [d for d in dirs if d != "__pycache__"]
        for name in names:
            if not name.endswith(".pyc"):
                path = Path(folder) / name
                out[path.relative_to(root.parent).as_posix()] = _sha(path.read_bytes())
    return out


@pytest.fixture
def servers(tmp_path: Path) -> Iterator[list[ServerProcess]]:
    started: list[ServerProcess] = []
    yield started
    for server in started:
        server.stop()


def _serve(tmp_path: Path, started: list[ServerProcess], name: str, **engine: Any) -> ServerProcess:
    config = write_config(tmp_path / f"{name}.yaml", **engine)
    server = ServerProcess(tmp_path / f"{name}.db", ["--config", str(config)])
    started.append(server)
    return server.start()


# --- the reference server over HTTP -----------------------------------------------------------------------------


def test_the_server_process_serves_its_file_inventory_and_config_digest_to_the_supervisor(
    tmp_path: Path, servers: list[ServerProcess]
) -> None:
    server = _serve(tmp_path, servers, "a", betting_s=5)
    status, body = server.call("GET", "/v1/identity", SUPERVISOR_TOKEN)
    assert status == 200, body
    now, start = body["now"], body["at_start"]
    assert now["name"] == "xocdia-server" and now["files"] == _files_of(PACKAGE)
    assert not any("__pycache__" in path or path.endswith(".pyc") for path in now["files"])
    lines = "".join(f"{digest}  {path}\n" for path, digest in sorted(now["files"].items()))
    assert now["build"] == _sha(lines.encode()) == start["build"]
    assert now["config"] == start["config"] and now["taken_at"].endswith("Z")
    assert server.call("GET", "/v1/identity", PLAYERS["alice"][0])[0] == 403
    assert server.call("GET", "/v1/identity")[0] == 401


def test_the_config_digest_follows_the_game_settings_not_the_players_or_their_tokens(
    tmp_path: Path, servers: list[ServerProcess]
) -> None:
    a = _serve(tmp_path, servers, "a", betting_s=5)
    other_players = tmp_path / "b.yaml"
    doc = yaml.safe_load(write_config(tmp_path / "tmp.yaml", betting_s=5).read_text())
    doc["players"] = [{"id": "zoe", "token": "zoe-token-77", "balance": 7}]
    other_players.write_text(yaml.safe_dump(doc))
    b = ServerProcess(tmp_path / "b.db", ["--config", str(other_players)])
    servers.append(b)
    b.start()
    c = _serve(tmp_path, servers, "c", betting_s=6)
    digests = [s.call("GET", "/v1/identity", SUPERVISOR_TOKEN)[1]["now"]["config"] for s in (a, b, c)]
    assert digests[0] == digests[1] != digests[2]


# --- benches ----------------------------------------------------------------------------------------------------


def _bench_file(folder: Path, server: dict[str, Any], transport: str = "memory", **top: Any) -> Path:
    doc = {
        "name": "ident",
        "server": server,
        "devices": {"transport": transport},
        "timing": {"betting_s": 1.0, "round_gap_s": 0.05, "result_timeout_s": 5.0, "step_timeout_s": 20.0},
        **top,
    }
    path = folder / "bench.yaml"
    path.write_text(yaml.safe_dump(doc), encoding="utf-8")
    return path


def test_the_in_process_bench_is_identified_alike_through_its_api_and_direct(tmp_path: Path) -> None:
    via_api = identify_bench(load_bench("in-process"))
    direct = identify_bench(load_bench(_bench_file(tmp_path, {"kind": "in-process", "options": {"api": "direct"}})))
    assert via_api.identified and via_api.name == "xocdia-server" and via_api.note == ""
    system = {c.name: c.digest for c in via_api.components if c.source == "system"}
    assert system == {**_files_of(PACKAGE), "config": system["config"]}
    hellos = {c.name: c for c in via_api.components if c.source == "device"}
    assert sorted(hellos) == sorted(f"device:{line}" for line in LINES)
    for component in hellos.values():
        assert component.detail.startswith("id=SRV-ref proto=1 fw=") and component.digest == _sha(
            component.detail.encode()
        )
    assert identity_changes(via_api, direct) == []
    assert via_api.extra["adapter"].endswith("InProcessAdapter") and "device_lines" not in via_api.extra


def test_a_file_changed_under_a_running_server_is_named_by_its_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The acceptance of issue 34: a copy of the server package, one source file changed while it runs: the next
    identification differs in that component and the build, nothing else, and remembers the build at start."""
    copy = tmp_path / "copy"
    shutil.copytree(PACKAGE, copy / "gameserver", ignore=shutil.ignore_patterns("__pycache__"))
    compileall.compile_dir(copy / "gameserver", quiet=1)  # bytecode caches, which the inventory leaves out
    assert list((copy / "gameserver" / "__pycache__").glob("engine.*.pyc"))
    monkeypatch.setenv("PYTHONPATH", str(copy))
    command = [sys.executable, "-P", "-m", "gameserver.cli"]  # -P: the copy, not the working folder's package
    bench = load_bench(_bench_file(tmp_path, {"kind": "command", "command": command}, transport="pty"))
    with Rig.build(bench, {}) as rig:
        rig.run_until(lambda: len(device_components(bench, rig.recorder)[0]) == len(LINES), "every HELLO", 5.0)
        before = identify_rig(rig)
        files_before = _files_of(copy / "gameserver")
        engine = copy / "gameserver" / "engine.py"
        engine.write_bytes(engine.read_bytes() + b"# one more line\n")
        after = identify_rig(rig)
    assert before.identified and before.extra["build_at_start"] == before.build
    system = {c.name: c.digest for c in before.components if c.source == "system" and c.name != "config"}
    assert system == files_before
    changes = identity_changes(before, after)
    assert [line.split(":", 1)[0] for line in changes] == ["build", "changed gameserver/engine.py (system)"], changes
    assert changes[1].endswith(_sha(engine.read_bytes()))
    assert after.extra["build_at_start"] == before.build != after.build
    assert sorted(c.name for c in after.components if c.source == "device") == sorted(f"device:{n}" for n in LINES)


def test_the_labs_own_files_are_hashed_by_the_kit_and_one_changed_byte_changes_one_digest(tmp_path: Path) -> None:
    (tmp_path / "fw").mkdir()
    (tmp_path / "fw" / "reader.bin").write_bytes(b"\x00\x01firmware")
    (tmp_path / "fw" / "lamp.bin").write_bytes(b"lamp v2")
    (tmp_path / "seal.txt").write_text("seal 42\n")
    server = {"kind": "in-process"}
    bench = load_bench(_bench_file(tmp_path, server, identify={"files": ["fw/*.bin", "seal.txt", "fw/lamp.bin"]}))
    before = identify_bench(bench)
    lab = {c.name: c.digest for c in before.components if c.source == "lab"}
    assert lab == {
        "lab:fw/lamp.bin": _sha(b"lamp v2"),
        "lab:fw/reader.bin": _sha(b"\x00\x01firmware"),
        "lab:seal.txt": _sha(b"seal 42\n"),
    }
    (tmp_path / "fw" / "reader.bin").write_bytes(b"\x00\x02firmware")
    old, new = _sha(b"\x00\x01firmware"), _sha(b"\x00\x02firmware")
    assert identity_changes(before, identify_bench(bench)) == [f"changed lab:fw/reader.bin (lab): {old} -> {new}"]


@pytest.mark.parametrize(
    ("identify", "message"),
    [
        ([], "bench.yaml: identify: must be a mapping; got []"),
        ({"file": ["a"]}, "bench.yaml: identify.file: unknown field; allowed: files; got 'file'"),
        ({"files": []}, "identify.files: must be a non-empty list of file paths or globs relative to the bench file"),
        ({"files": ["ok.txt", 3]}, "identify.files: must be a non-empty list"),
    ],
)
def test_a_bad_identify_key_names_the_field(tmp_path: Path, identify: Any, message: str) -> None:
    with pytest.raises(BenchError, match=re.escape(message)):
        load_bench(_bench_file(tmp_path, {"kind": "in-process"}, identify=identify))


def test_an_entry_that_matches_no_file_stops_the_identification_before_any_server_starts(tmp_path: Path) -> None:
    (tmp_path / "seal.txt").write_text("x")
    bench = load_bench(_bench_file(tmp_path, {"kind": "in-process"}, identify={"files": ["seal.txt", "fw/*.bin"]}))
    with pytest.raises(BenchError, match=r"bench\.yaml: identify\.files\[1\]: 'fw/\*\.bin' matches no file"):
        identify_bench(bench)


# --- systems that report nothing, or something malformed ---------------------------------------------------------


def test_a_foreign_bench_whose_adapter_has_no_identify_is_not_identified_by_the_system(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.syspath_prepend(str(FOREIGN))
    found = identify_bench(load_bench(FOREIGN / "lotus.yaml"))
    assert not found.identified and found.build is None and found.name is None
    assert found.note == f"{NOT_IDENTIFIED} (adapter LotusAdapter has no identify())"
    assert not [c for c in found.components if c.source == "system"]
    again = Identification.from_json(json.loads(json.dumps(found.to_json())))
    assert again == found


class _EarlierServer(http.server.BaseHTTPRequestHandler):
    """A server of an earlier version at a bench's URL: an event log, and 404 for everything else."""

    def do_GET(self) -> None:
        known = self.path.startswith("/v1/events")
        body = json.dumps({"events": []} if known else {"error": {"code": "not_found", "message": self.path}})
        self.send_response(200 if known else 404)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(body.encode())

    def log_message(self, *args: Any) -> None:
        return


def test_a_url_bench_whose_server_has_no_identity_endpoint_is_not_identified_by_the_system(tmp_path: Path) -> None:
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _EarlierServer)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{httpd.server_address[1]}"
        bench = load_bench(_bench_file(tmp_path, {"kind": "in-process"}))
        adapter = HttpAdapter({"url": url, "supervisor_token": "boss"})
        adapter.start(ServerSetup((), {}, simpy.Environment(), tmp_path, 1.0, 0.05, 60.0, 3, 5.0, 3.0))
        found = identify_adapter(adapter, bench)
        adapter.stop()
    finally:
        httpd.shutdown()
        httpd.server_close()
    assert not found.identified and found.components == ()
    assert found.note == f"{NOT_IDENTIFIED} (adapter HttpAdapter: the server at 127.0.0.1:{url.rsplit(':', 1)[1]}" + (
        " has no GET /v1/identity)"
    )


class TruncatingAdapter(InProcessAdapter):
    """The reference adapter whose answer's build digest lost its last hex digit (a lab adapter's bug)."""

    def identify(self) -> dict[str, Any]:
        answer = super().identify()
        return {**answer, "build": answer["build"][:-1]}


class OffAdapter(InProcessAdapter):
    """The reference adapter of a server that reports no identity as configured."""

    def identify(self) -> dict[str, Any]:
        raise AdapterError("not_supported", "this build has its identity endpoint switched off")


def test_a_malformed_answer_is_refused_naming_the_field_and_not_supported_is_recorded(tmp_path: Path) -> None:
    module = "tests.evidence.test_identity"
    bad = load_bench(_bench_file(tmp_path, {"kind": "in-process", "adapter": f"{module}:TruncatingAdapter"}))
    with pytest.raises(AdapterError, match=r"TruncatingAdapter\.identify\(\): build: must be sha256:<64 hex>"):
        identify_bench(bad)
    off = identify_bench(load_bench(_bench_file(tmp_path, {"kind": "in-process", "adapter": f"{module}:OffAdapter"})))
    assert not off.identified and off.build is None
    assert off.note == f"{NOT_IDENTIFIED} (adapter OffAdapter: this build has its identity endpoint switched off)"
    assert sorted(c.name for c in off.components) == sorted(f"device:{line}" for line in LINES)


# --- the record itself ------------------------------------------------------------------------------------------


def test_an_identification_round_trips_through_json_with_its_components_sorted() -> None:
    d1, d2 = _sha(b"one"), _sha(b"two")
    made = Identification(
        True,
        "srv",
        "1.2",
        d1,
        (Component("z.py", d1, "system"), Component("device:bowl", d2, "device", "id=SRV-1 proto=1 fw=9")),
        "",
        "2026-12-02T10:00:00Z",
        {"b": "2", "a": "1"},
    )
    raw = made.to_json()
    assert [c["name"] for c in raw["components"]] == ["device:bowl", "z.py"] and list(raw["extra"]) == ["a", "b"]
    text = json.dumps(raw, sort_keys=True)
    assert Identification.from_json(json.loads(text)) == made
    assert json.dumps(Identification.from_json(json.loads(text)).to_json(), sort_keys=True) == text
    with pytest.raises(ValueError, match=r"component 'z\.py' named twice"):
        Identification(True, components=(Component("z.py", d1, "system"), Component("z.py", d2, "system")))


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda r: r["components"][0].update(digest="sha256:abc"), r"components\[0\]\.digest: must be sha256:"),
        (lambda r: r["components"][1].update(source="vendor"), r"components\[1\]\.source: must be one of system"),
        (lambda r: r.update(identified="yes"), r"identification\.identified: must be true or false"),
        (lambda r: r.update(extra={"a": 1}), r"identification\.extra: must map text to text"),
        (lambda r: r.update(signed=True), r"identification: unknown field 'signed'"),
    ],
)
def test_a_damaged_identification_is_refused_naming_the_field(change: Any, message: str) -> None:
    d = _sha(b"x")
    raw = Identification(True, "s", "1", d, (Component("a", d, "system"), Component("b", d, "lab"))).to_json()
    change(raw)
    with pytest.raises(InputError, match=message):
        Identification.from_json(raw)


def test_identity_changes_names_every_difference_in_order() -> None:
    d1, d2, d3 = _sha(b"1"), _sha(b"2"), _sha(b"3")
    before = Identification(True, "srv", "1.0", d1, (Component("a.py", d1, "system"), Component("gone", d2, "lab")))
    after = Identification(True, "srv", "1.1", d2, (Component("a.py", d3, "system"), Component("new", d1, "lab")))
    assert identity_changes(before, before) == []
    assert identity_changes(before, after) == [
        "version: 1.0 -> 1.1",
        f"build: {d1} -> {d2}",
        f"changed a.py (system): {d1} -> {d3}",
        f"removed gone (lab): {d2}",
        f"added new (lab): {d1}",
    ]
    unknown = Identification(False, components=before.components[1:], note=f"{NOT_IDENTIFIED} (x)")
    assert identity_changes(before, unknown)[0] == f"identified: identified -> not identified ({NOT_IDENTIFIED} (x))"
