"""A command whose extra is not installed says so in one line naming the ``pip install`` to run (exit 2)."""

from __future__ import annotations

import importlib.util

import pytest

import gameserver.cli
import harness.cli.certify
from harness.cli import main
from harness.errors import MissingExtra, require_extra


def test_require_extra_names_the_missing_distributions_and_the_pip_install() -> None:
    require_extra("certify", {"json": "json"}, "cmd")  # present: nothing
    with pytest.raises(MissingExtra) as missing:
        require_extra("certify", {"json": "json", "no_such_module_x": "no-such-dist"}, "xocdia-hil certify")
    assert str(missing.value) == (
        "xocdia-hil certify needs no-such-dist, not installed: pip install 'xocdia-hil[certify]'"
    )


def test_certify_without_its_extra_is_one_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(harness.cli.certify, "CERTIFY_EXTRA", {"pytest_bdd_missing_here": "pytest-bdd"})
    assert main(["certify"]) == 2
    err = capsys.readouterr().err
    assert err == (
        "xocdia-hil: error: xocdia-hil certify needs pytest-bdd, not installed: pip install 'xocdia-hil[certify]'\n"
    )


def test_the_server_without_its_extra_is_one_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "httptools" else real(name, *a))
    assert gameserver.cli.main(["--db", "x.db", "--port", "0"]) == 2
    err = capsys.readouterr().err
    assert err == "xocdia-server: error: needs httptools, not installed: pip install 'xocdia-hil[server]'\n"
