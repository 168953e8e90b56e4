"""The certification run's bench event feed (``--feed FILE``, what ``xocdia-hil certify --record/--live`` passes):
every scenario's rig tapped onto one feed, appended to FILE as JSON Lines.

pytest-xdist workers append to the same file: each event is one ``write`` of one whole line on a descriptor opened
with ``O_APPEND``, so lines from different workers never mix (their order is the order they were written), and a
live page following the file sees each event as it is published. A worker first announces how many scenarios the
run collected (a ``note``: ``who: certify``, ``what: scenarios``, ``total``); each scenario is announced by a
``note`` (``who: scenario``, ``what``: its feature and name), each of its steps as it starts by a ``note`` (``who:
step``, ``what``: its keyword and text, ``detail``: the scenario), its rigs' rounds are judged one by one as they
end (the rig's tap; what the rig did after its last round is published when the steps are done), and it ends with
a ``verdict`` event carrying ``scenario``, ``ok`` and ``outcome``.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from typing import Any

import pytest

from harness.bench.tap import RigTap, rig_taps
from harness.feed import Feed, FeedKind


class AppendSink:
    """A line sink (:attr:`Feed.writers`) that appends each line to ``path`` with one ``write`` call (safe with
    several writer processes; a live page following the file sees each event as it is published)."""

    def __init__(self, path: str) -> None:
        self.fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)

    def __call__(self, line: str) -> None:
        os.write(self.fd, (line + "\n").encode("utf-8"))

    def close(self) -> None:
        with contextlib.suppress(OSError):
            os.close(self.fd)


class FeedPlugin:
    """Taps every rig the scenarios build (registered by the xocdia plugin when ``--feed`` is given)."""

    def __init__(self, path: str) -> None:
        self.sink = AppendSink(path)
        self.feed = Feed(keep=False)
        self.feed.writers.append(self.sink)
        self.scenario = ""
        self._taps: contextlib.AbstractContextManager[list[RigTap]] = rig_taps(self.feed, lambda: self.scenario)
        self.taps = self._taps.__enter__()

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        total = len(session.items)
        self.feed.publish_last(FeedKind.NOTE, who="certify", what="scenarios", detail=f"{total} to run", total=total)

    def pytest_bdd_before_scenario(self, feature: Any, scenario: Any) -> None:
        self.scenario = f"{feature.name}: {scenario.name}"
        self.feed.publish(FeedKind.NOTE, 0.0, who="scenario", what=self.scenario, detail="")

    def pytest_bdd_before_step(self, request: Any, feature: Any, scenario: Any, step: Any, step_func: Any) -> None:
        self.feed.publish_last(FeedKind.NOTE, who="step", what=f"{step.keyword} {step.name}", detail=self.scenario)

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_call(self, item: pytest.Item) -> Iterator[None]:
        yield
        if self.taps:
            self.taps[-1].finish()  # the steps are done: what the rig did last, and its last rounds, before the verdict

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_teardown(self, item: pytest.Item) -> None:
        if self.taps:
            self.taps[-1].finish()  # before the scenario's rig is closed (a no-op when the call finished it)

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        props = dict(report.user_properties)
        if "xocdia_scenario" not in props or hasattr(report, "node"):  # xdist controller: the worker published it
            return
        if report.when == "call" or (report.when == "setup" and report.outcome != "passed"):
            self.feed.publish(
                FeedKind.VERDICT,
                0.0,
                scenario=str(props["xocdia_scenario"]),
                clauses=str(props.get("xocdia_clauses", "")),
                ok=report.outcome == "passed",
                outcome=report.outcome,
            )

    def pytest_unconfigure(self, config: pytest.Config) -> None:
        with contextlib.suppress(Exception):
            self._taps.__exit__(None, None, None)
        self.sink.close()
