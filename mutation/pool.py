"""The runner's side of ``mutation.worker``: N worker processes, one per copy of the tree, fed one mutant each at
a time.

Guarantees: :meth:`Workers.run` sends each job to the next idle worker and calls ``done(job, reply)`` in the
calling thread as replies arrive (so the caller alone writes the session and the report); a worker that dies
while running a job makes that job's reply an ``error`` and is not used again; :meth:`Workers.close` (also on
leaving the ``with`` block, and on Ctrl-C) stops every worker and its running child.
"""

from __future__ import annotations

import contextlib
import json
import os
import selectors
import signal
import subprocess
import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from types import TracebackType
from typing import Any

Job = dict[str, Any]


class WorkerError(Exception):
    """A worker could not start."""


class _Worker:
    def __init__(self, tree: Path, preimport: Path, blocked: list[str]) -> None:
        env = {
            **os.environ,
            "PYTHONPATH": str(tree),
            "XOCDIA_FEATURES": str(tree / "features"),
            "PYTHONDONTWRITEBYTECODE": "1",
        }
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "mutation.worker", str(preimport), *blocked],
            cwd=tree,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            start_new_session=True,
        )
        self.job: Job | None = None

    def ready(self) -> None:
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if not line or not json.loads(line).get("ready"):
            raise WorkerError(f"a mutation worker did not start (exit {self.proc.poll()})")

    def send(self, job: Job) -> None:
        assert self.proc.stdin is not None
        self.job = job
        self.proc.stdin.write(json.dumps(job["request"]) + "\n")
        self.proc.stdin.flush()

    def reply(self) -> dict[str, Any]:
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if not line:
            code = self.proc.wait()
            return {"outcome": "error", "output": f"the worker died (exit {code})", "diff": ""}
        reply: dict[str, Any] = json.loads(line)
        return reply

    def stop(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait()


class Workers:
    """One worker per tree in ``trees``, each importing ``preimport``'s modules once, except the ``blocked``
    packages (those of the mutated modules)."""

    def __init__(self, trees: list[Path], preimport: Path, blocked: list[str]) -> None:
        self._workers = [_Worker(tree, preimport, blocked) for tree in trees]
        try:
            for worker in self._workers:
                worker.ready()
        except BaseException:
            self.close()
            raise

    def __enter__(self) -> Workers:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.close()

    def run(self, jobs: Iterable[Job], done: Callable[[Job, dict[str, Any]], None]) -> None:
        """Run every job (each a dict with a ``request`` for the worker, and anything the caller keeps)."""
        pending = iter(jobs)
        alive = list(self._workers)
        with selectors.DefaultSelector() as sel:
            for worker in alive:
                job = next(pending, None)
                if job is None:
                    break
                worker.send(job)
                assert worker.proc.stdout is not None
                sel.register(worker.proc.stdout, selectors.EVENT_READ, worker)
            while sel.get_map():
                for key, _ in sel.select():
                    worker = key.data
                    reply = worker.reply()
                    job, worker.job = worker.job, None
                    assert job is not None
                    done(job, reply)
                    if worker.proc.poll() is not None:
                        sel.unregister(key.fileobj)
                        continue
                    following = next(pending, None)
                    if following is None:
                        sel.unregister(key.fileobj)
                    else:
                        worker.send(following)
        if next(pending, None) is not None:
            raise WorkerError("every mutation worker died")

    def close(self) -> None:
        for worker in self._workers:
            worker.stop()
