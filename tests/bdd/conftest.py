"""pytest-bdd wiring for the feature bindings in this folder.

pytest-bdd 9 finds steps only in conftest modules and plugins, and pytest refuses ``pytest_plugins`` in a
conftest below the rootdir once the whole suite runs (``pytest`` from the repository root). So each step
module's names (its step fixtures and shared fixtures) are imported here instead: one ``import *`` line per
area.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from harness.steps.stats import *  # noqa: F403 - step fixtures must live in this conftest's namespace

TAG_PREFIXES = ("clause:", "gli:")


def pytest_bdd_apply_tag(tag: str, function: Callable[..., Any]) -> bool | None:
    """Accept ``@clause:XX`` and ``@gli:N`` tags without making pytest markers of them (--strict-markers)."""
    if tag.startswith(TAG_PREFIXES):
        return True
    return None
