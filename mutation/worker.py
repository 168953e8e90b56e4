"""``python -m mutation.worker PREIMPORT PACKAGE...``: runs mutants one at a time in the tree it is started in, each
in a forked copy of itself, so the suite's imports are paid once per worker rather than once per mutant.

Protocol: one JSON request per line on stdin, one JSON reply per line on the stdout it started with (file
descriptor 1 is then pointed at stderr, so nothing an import prints can corrupt a reply). A request is
``{"path", "operator", "occurrence", "args", "timeout", "run"}``; the reply is ``{"outcome", "output", "diff"}``.

Guarantees:

- Before serving, every module listed in the ``PREIMPORT`` file (JSON: ``{"modules": [...]}``) is imported, except
  the packages named (those of the mutated modules: ``gameserver``) and what imports them: those are imported
  only in each forked run, from the mutated source (bytecode is neither written nor read for them: their cached
  files are removed by the caller and ``sys.dont_write_bytecode`` is set).
- Each request: cosmic-ray applies the mutation to the file, a forked child (its own session) runs
  ``pytest.main(args)`` with its output in a temporary file, and the file is put back whatever happens. A child
  still running after ``timeout`` seconds is killed with its whole process group.
- ``outcome``: ``survived`` (exit 0), ``killed`` (any other exit), ``timeout``, ``not_run`` (``"run": false``:
  the mutation is applied only for its diff), ``no_test`` (the operator found no such occurrence) or ``error`` (the
  mutation could not be applied: ``output`` holds the traceback).
"""

from __future__ import annotations

import contextlib
import difflib
import importlib
import importlib.abc
import json
import os
import signal
import sys
import tempfile
import time
import traceback
from collections.abc import Sequence
from pathlib import Path
from typing import Any


def _within(name: str, packages: Sequence[str]) -> bool:
    return name.split(".")[0] in packages


class _Block(importlib.abc.MetaPathFinder):
    """While pre-importing: refuse the mutated packages, so nothing imported once holds their unmutated code."""

    def __init__(self, packages: Sequence[str]) -> None:
        self.packages = tuple(packages)

    def find_spec(self, fullname: str, path: Sequence[str] | None, target: object = None) -> None:
        if _within(fullname, self.packages):
            raise ImportError(f"{fullname} is imported only in a forked run")
        return None


def preimport(modules: list[str], blocked: Sequence[str]) -> int:
    """Import ``modules`` except the ``blocked`` packages (modules that need them fail and are left to the forked
    runs); returns how many imported."""
    blocker = _Block(blocked)
    sys.meta_path.insert(0, blocker)
    done = 0
    try:
        for name in modules:
            if _within(name, (*blocked, "__main__", "__mp_main__")):
                continue
            try:
                importlib.import_module(name)
                done += 1
            except Exception:
                continue
    finally:
        sys.meta_path.remove(blocker)
    leaked = [m for m in sys.modules if _within(m, blocked)]
    if leaked:
        raise RuntimeError(f"pre-imported a mutated package: {', '.join(sorted(leaked))}")
    return done


def run_pytest(args: list[str], timeout: float) -> tuple[int | None, str]:
    """Run ``pytest.main(args)`` in a forked child; returns (exit status, or None when it ran past ``timeout``
    and was killed, and its output)."""
    with tempfile.TemporaryFile() as out:
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:  # the child: never returns
            code = 70
            try:
                os.setsid()
                os.dup2(out.fileno(), 1)
                os.dup2(out.fileno(), 2)
                os.dup2(os.open(os.devnull, os.O_RDONLY), 0)
                sys.dont_write_bytecode = True
                import pytest

                code = int(pytest.main(args))
            except BaseException:
                traceback.print_exc()
            finally:
                sys.stdout.flush()
                sys.stderr.flush()
                os._exit(code)
        status = _wait(pid, timeout)
        out.seek(0)
        return status, out.read().decode("utf-8", errors="replace")


def _wait(pid: int, timeout: float) -> int | None:
    deadline = time.monotonic() + timeout
    pause = 0.005
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(status)
        if time.monotonic() > deadline:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            return None
        time.sleep(pause)
        pause = min(0.05, pause * 2)


def serve(request: dict[str, Any]) -> dict[str, Any]:
    """Apply one mutant, run the suite on it, put the file back (the module docstring's contract)."""
    from cosmic_ray.mutating import use_mutation
    from cosmic_ray.plugins import get_operator

    path = Path(request["path"])
    try:
        operator = get_operator(request["operator"])()
        with use_mutation(path, operator, request["occurrence"]) as (before, after):
            if after is None:
                return {"outcome": "no_test", "output": "", "diff": ""}
            lines = difflib.unified_diff(
                before.split("\n"), after.split("\n"), fromfile=f"a/{path}", tofile=f"b/{path}", lineterm=""
            )
            diff = "\n".join(lines)
            if not request.get("run", True):
                return {"outcome": "not_run", "output": "", "diff": diff}
            status, output = run_pytest(list(request["args"]), float(request["timeout"]))
    except Exception:
        return {"outcome": "error", "output": traceback.format_exc(), "diff": ""}
    if status is None:
        return {"outcome": "timeout", "output": "timeout", "diff": diff}
    return {"outcome": "survived" if status == 0 else "killed", "output": output, "diff": diff}


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    replies = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)
    modules = json.loads(Path(args[0]).read_text(encoding="utf-8"))["modules"] if args else []
    sys.dont_write_bytecode = True
    preimport(modules, args[1:])
    replies.write(json.dumps({"ready": True}) + "\n")
    replies.flush()
    for line in sys.stdin:
        if line.strip():
            started = time.monotonic()
            reply = serve(json.loads(line))
            reply["seconds"] = round(time.monotonic() - started, 2)
            replies.write(json.dumps(reply) + "\n")
            replies.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
