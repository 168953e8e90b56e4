"""Packaging beside ``pyproject.toml`` (which holds the metadata): the code packages, plus the repository's
``fixtures/``, ``features/``, ``docs/`` and ``examples/`` folders shipped as the data packages
``xocdia_hil_fixtures``, ``xocdia_hil_features``, ``xocdia_hil_docs`` and ``xocdia_hil_examples`` (every subfolder
of ``examples/``, whatever it holds). The folders stay where they are; the mapping works for a wheel and for an
editable install alike, and :mod:`harness.files` finds them with :mod:`importlib.resources` either way."""

from setuptools import find_packages, setup

DATA_PACKAGES = {
    "xocdia_hil_fixtures": "fixtures",
    "xocdia_hil_features": "features",
    "xocdia_hil_docs": "docs",
    "xocdia_hil_examples": "examples",
}

setup(
    packages=[*find_packages(include=["simulator*", "harness*", "gameserver*"]), *DATA_PACKAGES],
    package_dir=DATA_PACKAGES,
)
