"""The hash chain over the pack's feed: recomputed from its genesis, it names the first line that does not fit,
and the follower chains every whole line that several writer processes append, once each."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from harness.evidence.chain import ChainFollower, ChainWriter, check_chain, genesis
from harness.feed import FeedKind, encode_line


def _chain(path: Path, n: int, report_id: str = "r") -> ChainWriter:
    writer = ChainWriter(path, genesis(report_id))
    for i in range(n):
        writer.append(encode_line(i, float(i), FeedKind.NOTE, {"who": "w", "what": f"event {i}"}))
    writer.close()
    return writer


def test_an_untouched_chain_checks_out_to_its_head(tmp_path: Path) -> None:
    writer = _chain(tmp_path / "feed.jsonl", 5)
    check = check_chain(tmp_path / "feed.jsonl", genesis("r"), writer.head)
    assert (check.lines, check.head, check.problem) == (5, writer.head, None)
    lines = (tmp_path / "feed.jsonl").read_text(encoding="utf-8").splitlines()
    assert [json.loads(line)["n"] for line in lines] == [0, 1, 2, 3, 4]
    assert json.loads(lines[0])["prev"] == genesis("r")
    assert json.loads(lines[1])["event"]["data"]["what"] == "event 1"


@pytest.mark.parametrize("line", [1, 2, 3, 4, 5])
def test_one_byte_changed_in_any_line_names_that_line(tmp_path: Path, line: int) -> None:
    path = tmp_path / "feed.jsonl"
    writer = _chain(path, 5)
    lines = path.read_bytes().split(b"\n")
    lines[line - 1] = lines[line - 1].replace(f"event {line - 1}".encode(), b"event Z")
    path.write_bytes(b"\n".join(lines))
    problem = check_chain(path, genesis("r"), writer.head).problem
    assert problem is not None and problem.startswith(f"feed.jsonl line {line}:"), problem


def test_a_changed_prev_a_removed_line_and_another_reports_genesis_are_refused(tmp_path: Path) -> None:
    path = tmp_path / "feed.jsonl"
    writer = _chain(path, 4)
    original = path.read_bytes()
    lines = original.split(b"\n")
    obj = json.loads(lines[2])
    obj["prev"] = "sha256:" + "0" * 64
    path.write_bytes(b"\n".join([*lines[:2], json.dumps(obj, separators=(",", ":")).encode(), *lines[3:]]))
    assert str(check_chain(path, genesis("r"), writer.head).problem).startswith("feed.jsonl line 3:")
    path.write_bytes(b"\n".join([*lines[:1], *lines[2:]]))  # line 2 removed
    assert check_chain(path, genesis("r"), writer.head).problem is not None
    path.write_bytes(b"\n".join(lines[:3]) + b"\n")  # the last line removed: the head no longer matches
    assert "does not end at the chain head" in str(check_chain(path, genesis("r"), writer.head).problem)
    path.write_bytes(original)
    assert str(check_chain(path, genesis("another"), writer.head).problem).startswith("feed.jsonl line 1:")


WRITER = """
import os, sys
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
for i in range(int(sys.argv[3])):
    os.write(fd, ('{"seq":%d,"t":0.0,"kind":"note","data":{"who":"%s"}}\\n' % (i, sys.argv[2])).encode())
"""


def test_the_follower_chains_every_line_of_several_writer_processes_once(tmp_path: Path) -> None:
    source, out = tmp_path / "raw.jsonl", tmp_path / "feed.jsonl"
    source.write_text("", encoding="utf-8")
    writer = ChainWriter(out, genesis("r"))
    follower = ChainFollower(source, writer)
    follower.start()
    procs = [subprocess.Popen([sys.executable, "-c", WRITER, str(source), f"w{k}", "400"]) for k in range(3)]
    assert [p.wait(timeout=60) for p in procs] == [0, 0, 0]
    follower.stop()
    writer.close()
    assert check_chain(out, genesis("r"), writer.head).problem is None
    events = [json.loads(line)["event"] for line in out.read_text(encoding="utf-8").splitlines()]
    assert sorted((e["data"]["who"], e["seq"]) for e in events) == sorted(
        (f"w{k}", i) for k in range(3) for i in range(400)
    )
    for k in range(3):  # each writer's lines keep their order
        assert [e["seq"] for e in events if e["data"]["who"] == f"w{k}"] == list(range(400))


def test_a_writer_never_continues_an_existing_chain(tmp_path: Path) -> None:
    _chain(tmp_path / "feed.jsonl", 1)
    with pytest.raises(FileExistsError):
        ChainWriter(tmp_path / "feed.jsonl", genesis("r"))
