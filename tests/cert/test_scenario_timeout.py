"""``--scenario-timeout``: a scenario whose step never returns (a server stuck in an endless loop, which no
virtual-time step timeout can see) fails by timeout and the run goes on to the next scenario; tests that are not
Gherkin scenarios get no limit from the plugin."""

from __future__ import annotations

import pytest

pytest_plugins = ["pytester"]

FEATURE = """\
Feature: A server that hangs

  Scenario: A step never returns
    When the server loops forever

  Scenario: The next scenario still runs
    When nothing happens
"""

STEPS = """\
import time

from pytest_bdd import when


@when("the server loops forever")
def _loop() -> None:
    while True:
        pass


@when("nothing happens")
def _nothing() -> None:
    pass


@when("the server takes a second and a half")
def _slow() -> None:
    time.sleep(1.5)
"""

BINDING = """\
import time

from pytest_bdd import scenarios

scenarios("hang.feature")


def test_not_a_scenario():
    time.sleep(1.5)
"""


def test_a_hung_scenario_fails_by_timeout_and_the_run_goes_on(pytester: pytest.Pytester) -> None:
    pytester.makefile(".feature", hang=FEATURE)
    pytester.makeconftest(STEPS)
    pytester.makepyfile(test_hang=BINDING)
    result = pytester.runpytest_inprocess("--bench", "in-process", "--scenario-timeout", "1", "-p", "no:randomly")
    result.assert_outcomes(passed=2, failed=1)
    result.stdout.fnmatch_lines(["*Timeout (>1.0s) from pytest-timeout*", "FAILED *test_a_step_never_returns*"])


def test_zero_means_no_limit(pytester: pytest.Pytester) -> None:
    slow = "Feature: A slow server\n\n  Scenario: A slow step\n    When the server takes a second and a half\n"
    pytester.makefile(".feature", hang=slow)
    pytester.makeconftest(STEPS)
    pytester.makepyfile(test_hang='from pytest_bdd import scenarios\n\nscenarios("hang.feature")\n')
    assert pytester.runpytest_inprocess("--bench", "in-process", "--scenario-timeout", "1").ret != 0
    result = pytester.runpytest_inprocess("--bench", "in-process", "--scenario-timeout", "0")
    result.assert_outcomes(passed=1)
