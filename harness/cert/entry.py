"""The ``xocdia`` pytest entry point (``pytest11``): the plugin's options in every pytest run of an environment
where the kit is installed, and the plugin itself (:mod:`harness.cert.plugin`: bench fixtures, certification
steps, evidence, the clause matrix) only in the runs that want it, so a lab's other test suites in the same venv do
not load the bench, the judge and the step library.

The plugin is active when any of these holds:

- a bench or feature option is given: one of :data:`OPTIONS` on the command line, in ``PYTEST_ADDOPTS`` or in
  the ini file's ``addopts`` (``xocdia-hil certify`` always passes ``--bench``), or ``XOCDIA_FEATURES`` is set;
- the ini file says ``xocdia = true`` (this repository's own tests do);
- the environment says ``XOCDIA_PLUGIN=1``;
- the plugin module was named explicitly (``-p harness.cert.plugin`` or ``-p harness.pytest_plugin``).

This module imports only pytest.
"""

from __future__ import annotations

import importlib
import os
import shlex
import sys
from collections.abc import Iterable

import pytest

#: The plugin's options; giving any of them activates it.
OPTIONS = (
    "--bench",
    "--tags",
    "--dialect",
    "--clause-matrix",
    "--feed",
    "--explore",
    "--explore-seed",
    "--scenario-timeout",
)
#: The environment variable that activates the plugin for every run (``1``), and the one naming feature folders.
ENV, FEATURES_ENV = "XOCDIA_PLUGIN", "XOCDIA_FEATURES"
#: The ini key that activates it for a project's runs.
INI = "xocdia"
PLUGIN = "harness.cert.plugin"
#: Wall seconds a scenario may take by default; far above any shipped scenario on any shipped bench, it only stops
#: a server (or a mutant of one) that hangs, e.g. loops forever inside one step.
SCENARIO_TIMEOUT_S = 300.0


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("xocdia", "xocdia-hil certification")
    group.addoption("--bench", default="in-process", help="bench file or shipped bench name (default in-process)")
    group.addoption("--tags", default="", help="run only scenarios matching this tag expression")
    group.addoption("--dialect", default=None, help="device dialect instead of the bench file's (xocdia-hil dialects)")
    group.addoption("--clause-matrix", default="", help="folder for clause-matrix.json/.md")
    group.addoption("--feed", default="", help="append every scenario's bench event feed to this JSON Lines file")
    group.addoption("--explore", type=int, default=None, help="tables every exploration step plays (certify --explore)")
    group.addoption("--explore-seed", type=int, default=None, help="the root seed of every exploration step")
    group.addoption(
        "--scenario-timeout",
        type=float,
        default=SCENARIO_TIMEOUT_S,
        help=f"wall seconds a scenario may take before it fails by timeout (0: none; default {SCENARIO_TIMEOUT_S:g})",
    )
    parser.addini(INI, type="bool", default=False, help="activate the xocdia plugin (benches, steps) for every run")


def wanted(config: pytest.Config) -> bool:
    """Whether this run wants the plugin (the module's docstring lists when). Never raises."""
    if os.environ.get(ENV, "") == "1" or os.environ.get(FEATURES_ENV):
        return True
    if PLUGIN in sys.modules and config.pluginmanager.is_registered(sys.modules[PLUGIN]):
        return True
    try:
        if config.getini(INI):
            return True
        addopts = [str(a) for a in config.getini("addopts")]
    except (ValueError, KeyError):
        addopts = []
    args = [*config.invocation_params.args, *shlex.split(os.environ.get("PYTEST_ADDOPTS", "")), *addopts]
    return _names_an_option(args)


def _names_an_option(args: Iterable[str]) -> bool:
    return any(arg in OPTIONS or arg.split("=", 1)[0] in OPTIONS for arg in args)


def pytest_configure(config: pytest.Config) -> None:
    """Register :mod:`harness.cert.plugin` when :func:`wanted` (pytest then configures it as it registers)."""
    if wanted(config):
        plugin = importlib.import_module(PLUGIN)
        if not config.pluginmanager.is_registered(plugin):
            config.pluginmanager.register(plugin, PLUGIN)
