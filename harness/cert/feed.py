"""The certification run's bench event feed (``--feed FILE``, what ``xocdia-hil certify --record/--live`` passes):
every scenario's rig tapped onto one feed, appended to FILE as JSON Lines.

pytest-xdist workers append to the same file: each event is one ``write`` of one whole line on a descriptor opened
with ``O_APPEND``, so lines from different workers never mix (their order is the order they were written). Each
scenario is announced by a ``note`` (``who: scenario``, ``what``: its feature and name) and ends with a ``verdict``
event carrying ``scenario``, ``ok`` and ``outcome``.
"""

from __future__ import annotations

import contextlib
import os
from typing import Any

import pytest

from harness.bench.tap import RigTap, rig_taps
from harness.feed import Feed, FeedEvent, FeedKind


class AppendSink:
    """Appends each event as one line to ``path`` with one ``write`` call (safe with several writer processes)."""

    def __init__(self, path: str) -> None:
        self.fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)

    def __call__(self, event: FeedEvent) -> None:
        os.write(self.fd, (event.to_json() + "\n").encode("utf-8"))

    def close(self) -> None:
        with contextlib.suppress(OSError):
            os.close(self.fd)


class FeedPlugin:
    """Taps every rig the scenarios build (registered by the xocdia plugin when ``--feed`` is given)."""

    def __init__(self, path: str) -> None:
        self.sink = AppendSink(path)
        self.feed = Feed(keep=False)
        self.feed.sinks.append(self.sink)
        self.scenario = ""
        self._taps: contextlib.AbstractContextManager[list[RigTap]] = rig_taps(self.feed, lambda: self.scenario)
        self.taps = self._taps.__enter__()

    def pytest_bdd_before_scenario(self, feature: Any, scenario: Any) -> None:
        self.scenario = f"{feature.name}: {scenario.name}"
        self.feed.publish(FeedKind.NOTE, 0.0, who="scenario", what=self.scenario, detail="")

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_teardown(self, item: pytest.Item) -> None:
        if self.taps:
            self.taps[-1].finish()  # before the scenario's rig is closed: its last rounds are judged

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
