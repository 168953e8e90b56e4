"""pytest-bdd wiring: step modules load as plugins (pytest-bdd 9 finds steps only in conftest or plugins)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

pytest_plugins = [
    "harness.steps.stats",
]

TAG_PREFIXES = ("clause:", "gli:")


def pytest_bdd_apply_tag(tag: str, function: Callable[..., Any]) -> bool | None:
    """Accept ``@clause:XX`` and ``@gli:N`` tags without making pytest markers of them (--strict-markers)."""
    if tag.startswith(TAG_PREFIXES):
        return True
    return None
