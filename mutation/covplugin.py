"""The pytest plugin of the mutation run's baseline (``-p mutation.covplugin``, under ``coverage run``).

Guarantees, for the unmutated suite run once:

- every line coverage records while a test runs (its setup, call and teardown) is labelled with that test's node
  id as coverage's dynamic context; lines run outside any test (imports, collection, session start and end) keep
  the empty context;
- when ``XOCDIA_MUTATE_BASELINE`` names a file, it is written at the end of the session as JSON: ``seconds`` (each
  test's node id and wall seconds, in the order run) and ``modules`` (every module then imported: what a worker
  imports once before it forks a run per mutant, ``mutation.worker``).
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import coverage
import pytest

_SECONDS: dict[str, float] = {}


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    cov = coverage.Coverage.current()
    if cov is not None:
        cov.switch_context(item.nodeid)
    started = time.perf_counter()
    yield
    _SECONDS[item.nodeid] = round(time.perf_counter() - started, 3)
    if cov is not None:
        cov.switch_context("")


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    target = os.environ.get("XOCDIA_MUTATE_BASELINE")
    if target:
        record = {"seconds": _SECONDS, "modules": sorted(sys.modules)}
        Path(target).write_text(json.dumps(record), encoding="utf-8")
