"""Packaging beside ``pyproject.toml`` (which holds the metadata): the code packages, plus the repository's
``fixtures/``, ``features/`` and ``docs/`` folders shipped as the data packages ``xocdia_hil_fixtures``,
``xocdia_hil_features`` and ``xocdia_hil_docs``. The folders stay where they are; the mapping works for a wheel and
for an editable install alike, and :mod:`harness.files` finds them with :mod:`importlib.resources` either way."""

from setuptools import find_packages, setup

DATA_PACKAGES = {"xocdia_hil_fixtures": "fixtures", "xocdia_hil_features": "features", "xocdia_hil_docs": "docs"}

setup(
    packages=[*find_packages(include=["simulator*", "harness*", "gameserver*"]), *DATA_PACKAGES],
    package_dir=DATA_PACKAGES,
)
