"""The "major change?" question end to end: two packs of the reference server (in-process) before and after one
of its source files changed, each identified by the server's own package inventory; ``evidence diff`` names that
file and nothing else of the system. The server runs from a copy of its package, so the checkout is not touched."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import gameserver

PACK = """
import sys
from pathlib import Path
from harness.bench.config import load_bench
from harness.evidence.pack import PackOptions, PackWriter, RunFacts
import gameserver
assert Path(gameserver.__file__).resolve().parent == Path(sys.argv[2]).resolve(), gameserver.__file__
writer = PackWriter(PackOptions(Path(sys.argv[1])))
writer.start(RunFacts(load_bench("in-process"), []))
writer.finish(Path(sys.argv[1] + "-report"), None, 0)
"""


def test_diff_names_the_source_file_that_changed_between_two_packs(tmp_path: Path) -> None:
    copy = tmp_path / "site" / "gameserver"
    shutil.copytree(
        Path(gameserver.__file__).resolve().parent, copy, ignore=shutil.ignore_patterns("__pycache__", "*.pyc")
    )
    env = {**os.environ, "PYTHONPATH": str(copy.parent)}

    def pack(name: str) -> Path:
        done = subprocess.run(
            [sys.executable, "-c", PACK, str(tmp_path / name), str(copy)],
            cwd=tmp_path,  # not the checkout: its gameserver/ would come first on the path
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert done.returncode == 0, done.stdout + done.stderr
        return tmp_path / name

    before = pack("a")
    engine = copy / "engine.py"
    engine.write_text(engine.read_text(encoding="utf-8") + "\n# a change to the engine's source\n", encoding="utf-8")
    after = pack("b")
    done = subprocess.run(
        [sys.executable, "-m", "harness.cli", "evidence", "diff", str(before), str(after), "--json"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 1, done.stdout + done.stderr
    changes = json.loads(done.stdout)
    assert changes["verdicts"] == []
    assert [line.split(":")[0] for line in changes["identification"]] == [
        "build",
        "changed gameserver/engine.py (system)",
    ]
