"""``xocdia-hil dialects`` and ``dialects check`` as a lab runs them: the declared capabilities listed, a polled
vendor dialect checked on its declaration, a dialect found in the current working folder (by ``dialects check`` and by
a bench's ``devices.dialect``), and a line end that raises reported as its check's failure, every check still run."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from harness.bench.config import load_bench

REPO = Path(__file__).resolve().parents[2]
VENDOR = REPO / "tests" / "wire" / "dialects" / "vendor_poll.py"
#: The installed console script: its import path holds its own folder, not the working folder.
SCRIPT = Path(sys.executable).parent / "xocdia-hil"


def _script(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(SCRIPT), *args], capture_output=True, text=True, timeout=300, cwd=cwd, check=False)


def _lab_folder(tmp_path: Path, name: str, extra: str = "") -> Path:
    """A lab's working folder holding the vendor dialect as the module ``name`` (plus ``extra`` code)."""
    (tmp_path / f"{name}.py").write_text(VENDOR.read_text("utf-8") + textwrap.dedent(extra), "utf-8")
    return tmp_path


def test_the_list_shows_each_dialects_declared_capabilities() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "harness.cli", "dialects", "--json"], capture_output=True, text=True, cwd=REPO
    )
    assert proc.returncode == 0, proc.stderr
    rows = {row["name"]: row for row in json.loads(proc.stdout)}
    assert rows["xocdia-ascii"]["capabilities"]["round_tags"] is True
    assert rows["xocdia-bus"]["capabilities"]["round_ids"] == "text"
    assert rows["xocdia-jsonl"]["capabilities"]["confidence"] is True


def test_a_vendor_dialect_in_the_working_folder_passes_on_its_declaration(tmp_path: Path) -> None:
    folder = _lab_folder(tmp_path, "lab_vendor_ok")
    proc = _script(
        "dialects", "check", "lab_vendor_ok:VendorPollDialect", "--no-certify", "--frames", "500", cwd=folder
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[1].startswith("  declares: poll dialogue, numeric round ids; carries positions, problem_reasons;")
    assert "golden vectors                    0 cases  SKIP" in proc.stdout
    assert "round trip                      500 cases  PASS" in proc.stdout
    fuzz = next(line for line in lines if "framer fuzz" in line)
    assert fuzz.endswith("PASS") and int(fuzz.split()[2]) > 0
    assert lines[-1] == "conformance: PASS"


def test_a_line_end_that_raises_fails_its_check_without_a_traceback(tmp_path: Path) -> None:
    folder = _lab_folder(
        tmp_path,
        "lab_vendor_raises",
        """

        class RaisingDialect(VendorPollDialect):
            def device_end(self, line, settings):
                raise RuntimeError(f"no device on {line.name}")
        """,
    )
    proc = _script("dialects", "check", "lab_vendor_raises:RaisingDialect", "--no-certify", "--json", cwd=folder)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stdout + proc.stderr
    results = {r["name"]: r for r in json.loads(proc.stdout.rsplit("\n", 2)[0])}
    assert [r["status"] for r in results.values()] == ["SKIP", "PASS", "PASS", "FAIL"]
    assert results["dialogue loopback"]["failures"][0] == "line bowl: raised RuntimeError: no device on bowl"
    assert proc.stdout.strip().endswith("conformance: FAIL")


def test_a_bench_names_a_dialect_in_its_working_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = _lab_folder(tmp_path, "lab_vendor_bench")
    bench = folder / "bench.yaml"
    bench.write_text(
        "server: {kind: in-process}\ndevices: {transport: memory, dialect: 'lab_vendor_bench:VendorPollDialect'}\n",
        "utf-8",
    )
    monkeypatch.setattr(sys, "path", [p for p in sys.path if p not in ("", str(folder))])
    monkeypatch.chdir(folder)
    loaded = load_bench(bench)
    assert loaded.dialect.name == "vendor-poll"
    assert [line.name for line in loaded.lines] == ["bowl", "shaker", "reader", "lamp", "console"]
