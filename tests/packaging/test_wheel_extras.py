"""The wheel's ``[server]`` and ``[dask]`` extras, each installed by pip into a fresh venv of its own outside the clone
(the wheel and the helpers of ``test_wheel.py``): the reference server runs from the wheel (``xocdia-server --help``,
a start on a temporary ledger that answers HTTP, a stop by SIGTERM), and a fault campaign runs on a Dask
``LocalCluster`` started in the venv (``xocdia-hil campaign --scheduler``), its worker a process of that venv.
With ``[certify,evidence]``, a signed evidence pack is written by certify and verified offline, from the wheel.
The installed suite says its version (``features/SUITE_VERSION`` ships, and ``certify --json`` reports it)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from tests.packaging.test_wheel import UNSET, _once, _run, _venv, wheel  # noqa: F401 (wheel: the session fixture)

pytestmark = pytest.mark.slow

CLUSTER = """\
import sys
from distributed import LocalCluster

cluster = LocalCluster(
    n_workers=1, threads_per_worker=1, processes=True, host="127.0.0.1", dashboard_address=None, scheduler_port=0
)
print(cluster.scheduler_address, flush=True)
sys.stdin.read()  # until the test closes stdin
cluster.close()
"""


@pytest.fixture(scope="session")
def server_venv(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:  # noqa: F811
    """The wheel installed with ``[server]`` alone, once per session; returns the venv's ``bin/``."""
    return _once(tmp_path_factory, "server", lambda folder: _venv(wheel, folder / "venv", "[server]"))


@pytest.fixture(scope="session")
def dask_venv(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:  # noqa: F811
    """The wheel installed with ``[dask]`` alone, once per session; returns the venv's ``bin/``."""
    return _once(tmp_path_factory, "dask", lambda folder: _venv(wheel, folder / "venv", "[dask]"))


@pytest.fixture(scope="session")
def evidence_venv(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:  # noqa: F811
    """The wheel installed with ``[certify,evidence]``, once per session; returns the venv's ``bin/``."""
    return _once(tmp_path_factory, "evidence", lambda folder: _venv(wheel, folder / "venv", "[certify,evidence]"))


def _env(bin_dir: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in UNSET}
    env["PATH"] = f"{bin_dir}{os.pathsep}{env.get('PATH', '')}"
    return env


def test_the_reference_server_runs_from_the_wheel_with_the_server_extra(server_venv: Path, tmp_path: Path) -> None:
    server = str(server_venv / "xocdia-server")
    assert "--db" in _run([server, "--help"], tmp_path, bin_dir=server_venv).stdout
    db = tmp_path / "ledger.db"
    proc = subprocess.Popen(
        [server, "--db", str(db), "--port", "0"],
        cwd=tmp_path,
        env=_env(server_venv),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        first = proc.stdout.readline().strip()
        assert first.startswith("xocdia-server: listening on http://127.0.0.1:"), (first, proc.stderr)
        url = first.rsplit(" ", 1)[1]
        try:
            with urllib.request.urlopen(url, timeout=10) as reply:
                status = reply.status
        except urllib.error.HTTPError as exc:  # any HTTP answer: the server is serving
            status = exc.code
        assert 100 <= status < 600
        proc.send_signal(signal.SIGTERM)
        # uvicorn shuts down on SIGTERM and then raises the signal again: the status is 0 or -SIGTERM, never a crash
        assert proc.wait(timeout=30) in (0, -signal.SIGTERM), proc.stderr.read() if proc.stderr else ""
        assert proc.stderr is not None and "Traceback" not in proc.stderr.read()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)
    assert db.is_file()  # the ledger was created


def test_a_campaign_runs_on_a_dask_cluster_from_the_wheel_with_the_dask_extra(dask_venv: Path, tmp_path: Path) -> None:
    python = str(dask_venv / "python")
    cluster = subprocess.Popen(
        [python, "-c", CLUSTER],
        cwd=tmp_path,
        env=_env(dask_venv),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert cluster.stdout is not None
        address = cluster.stdout.readline().strip()
        assert address.startswith("tcp://127.0.0.1:"), (address, cluster.stderr.read() if cluster.stderr else "")
        cmd = [str(dask_venv / "xocdia-hil"), "campaign", "--bench", "in-process", "--schedule", "chaos"]
        cmd += ["--seeds", "1-2", "--scheduler", address, "--json", "--out", str(tmp_path / "failures")]
        summary = json.loads(_run(cmd, tmp_path, timeout=600, bin_dir=dask_venv).stdout)
        assert summary["seeds"] == 2 and summary["passed"] == 2 and summary["rounds"] > 0, summary
    finally:
        if cluster.stdin is not None:
            cluster.stdin.close()
        try:
            cluster.wait(timeout=30)
        except subprocess.TimeoutExpired:
            cluster.kill()
            cluster.wait(10)


def test_the_installed_suite_has_its_version_and_changelog(server_venv: Path, tmp_path: Path) -> None:
    probe = (
        "from harness.cert.suite_version import CHANGELOG, installed_version, read_changelog\n"
        "print(installed_version(), len(read_changelog()), 'site-packages' in str(CHANGELOG))\n"
    )
    out = _run([str(server_venv / "python"), "-c", probe], tmp_path, bin_dir=server_venv).stdout.split()
    source = Path(__file__).resolve().parents[2] / "features" / "SUITE_VERSION"
    assert out[0] == source.read_text(encoding="utf-8").strip() and int(out[1]) > 0 and out[2] == "True", out


def test_a_signed_evidence_pack_is_written_and_verified_from_the_wheel(evidence_venv: Path, tmp_path: Path) -> None:
    xocdia = str(evidence_venv / "xocdia-hil")
    _run([xocdia, "evidence", "keygen", "lab-key"], tmp_path, bin_dir=evidence_venv)
    assert (tmp_path / "lab-key").stat().st_mode & 0o077 == 0 and (tmp_path / "lab-key.pub").is_file()
    args = ["certify", "--bench", "in-process", "--tags", "clause:SH-3", "--workers", "0", "--report", "r"]
    done = _run([xocdia, *args, "--evidence", "pack", "--sign-key", "lab-key"], tmp_path, bin_dir=evidence_venv)
    assert (tmp_path / "pack").is_dir(), done.stdout[-2000:]
    checked = _run([xocdia, "verify", "pack", "--key", "lab-key.pub"], tmp_path, bin_dir=evidence_venv)
    assert "signature" in checked.stdout.lower(), checked.stdout
    manifest = json.loads((tmp_path / "pack" / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["report_id"] in checked.stdout
    feed = tmp_path / "pack" / "feed.jsonl"
    lines = feed.read_bytes().splitlines(keepends=True)
    lines[len(lines) // 2] = lines[len(lines) // 2].replace(b'"n":', b'"n": ', 1)  # one observation edited
    feed.write_bytes(b"".join(lines))
    broken = _run([xocdia, "verify", "pack", "--key", "lab-key.pub"], tmp_path, bin_dir=evidence_venv, expect=1)
    assert "feed.jsonl" in broken.stdout + broken.stderr
