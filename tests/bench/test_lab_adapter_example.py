"""The adapter skeleton of ``xocdia-hil init``, filled in from docs/adapters.md and docs/server.md only
(``examples/lab/lab_adapter.py``), certifies a separately started server that opens its own rounds: the lab's
adapter module beside the bench file loads from the working folder, its players are created per scenario, and the
scenarios the bench cannot run are not applicable."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import yaml

from harness.files import FEATURES
from tests.bench.test_server_opens_rounds import _certify, _features, vendor  # noqa: F401  (vendor: the fixture)

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "lab" / "lab_adapter.py"
#: Beside the server-opened-rounds subset: a retried bet (the server's 200 replay) and a supervisor's correction.
MONEY = ("idempotency.feature", "corrections.feature")


def test_the_filled_in_skeleton_certifies_a_vendor_server(vendor: Path, tmp_path: Path) -> None:  # noqa: F811
    lab = tmp_path / "lab"
    lab.mkdir()
    shutil.copyfile(EXAMPLE, lab / "lab_adapter.py")
    bench = yaml.safe_load(vendor.read_text(encoding="utf-8"))
    bench["server"]["adapter"] = "lab_adapter:LabAdapter"
    (lab / "bench.yaml").write_text(yaml.safe_dump(bench), encoding="utf-8")
    features = _features(tmp_path)
    for name in MONEY:
        shutil.copyfile(FEATURES / name, features / name)
    done = _certify("--bench", "bench.yaml", "--features", str(features), "--report", "r", cwd=lab)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-1000:]
    matrix = json.loads((lab / "r" / "clause-matrix.json").read_text(encoding="utf-8"))
    assert (matrix["passed"], matrix["failed"], len(matrix["not_applicable"])) == (14, 0, 9), done.stdout[-3000:]
    assert [r["outcome"] for r in matrix["clauses"]["COR-1"]] == ["passed"] * 5  # the adapter's correct() was used
