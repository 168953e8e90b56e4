"""Alias kept for labs that load the plugin by module (``-p harness.pytest_plugin``): it registers the ``xocdia``
plugin (:mod:`harness.cert.plugin`) under its entry-point name, so pytest loads it exactly once whether it is named
by module, by entry point (``-p xocdia``) or found by autoload. It defines no hooks of its own."""

from __future__ import annotations

from typing import Any

from harness.cert import plugin as _plugin


def pytest_addhooks(pluginmanager: Any) -> None:
    """Register the real plugin, as ``xocdia`` when that name is free (autoload then skips the entry point of that
    name, already registered), and never twice."""
    if not pluginmanager.is_registered(_plugin):
        name = "xocdia" if pluginmanager.get_plugin("xocdia") is None else _plugin.__name__
        pluginmanager.register(_plugin, name)
