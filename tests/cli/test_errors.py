"""One exception root, caught once: every error class derives from XocdiaError, and the CLI's boundary turns one
into a single line with exit status 2 (bad input) or 1 (anything else)."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

import harness.cli.simulate
from harness.bench.config import BenchError
from harness.bench.rig import BenchTimeout
from harness.cli import main
from harness.cli.common import CliError
from harness.errors import AdapterError, InputError, Refused, XocdiaError
from harness.faults.prepare import InjectionRefused
from harness.faults.schedule import ScheduleError
from harness.files import load_profile
from harness.rules.audit import AllowListError
from harness.rules.reading import ReadingError
from harness.stats.readers import RecordError
from harness.wire.frame_errors import EncodeError
from harness.wire.text.fields import FieldError
from simulator import ProfileError, ScriptError
from simulator import errors as simulator_errors
from simulator.distributions import DistributionError

INPUT_ERRORS = (
    ProfileError,
    ScriptError,
    DistributionError,
    BenchError,
    ScheduleError,
    RecordError,
    ReadingError,
    AllowListError,
    CliError,
)


def test_the_root_is_defined_once_in_the_simulator_and_re_exported_by_the_harness() -> None:
    assert XocdiaError is simulator_errors.XocdiaError
    assert InputError is simulator_errors.InputError
    assert issubclass(InputError, XocdiaError) and issubclass(InputError, ValueError)


@pytest.mark.parametrize("cls", INPUT_ERRORS, ids=lambda c: c.__name__)
def test_bad_input_errors_are_input_errors_and_value_errors(cls: type[Exception]) -> None:
    assert issubclass(cls, InputError) and issubclass(cls, ValueError)


@pytest.mark.parametrize(
    ("cls", "also"),
    [(AdapterError, Exception), (BenchTimeout, AssertionError), (EncodeError, ValueError), (FieldError, ValueError)],
    ids=lambda c: c.__name__,
)
def test_other_errors_share_the_root_and_keep_their_old_base(cls: type[Exception], also: type[Exception]) -> None:
    assert issubclass(cls, XocdiaError) and issubclass(cls, also)
    assert not issubclass(cls, InputError)


def test_an_injection_refusal_is_a_refused_input_error() -> None:
    assert issubclass(InjectionRefused, Refused) and issubclass(Refused, InputError)


def _failing(exc: Exception, monkeypatch: pytest.MonkeyPatch) -> None:
    def run(args: argparse.Namespace) -> int:
        raise exc

    monkeypatch.setattr(harness.cli.simulate, "run", run)


@pytest.mark.parametrize(
    ("exc", "status", "line"),
    [
        (ProfileError("profile x.yaml: tokens.p_red: bad"), 2, "xocdia-hil: error: profile x.yaml: tokens.p_red: bad"),
        (InjectionRefused("bench 'prod' is not a fault target"), 2, "xocdia-hil: error: refused: bench 'prod' is not"),
        (AdapterError("unreachable", "the server is down"), 1, "xocdia-hil: error: unreachable: the server is down"),
        (BenchTimeout("no verdict within 30 s"), 1, "xocdia-hil: error: no verdict within 30 s"),
    ],
    ids=["input-error", "refused", "adapter-error", "bench-timeout"],
)
def test_the_boundary_prints_one_line_and_chooses_the_exit_status(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], exc: Exception, status: int, line: str
) -> None:
    _failing(exc, monkeypatch)
    assert main(["simulate", "--rounds", "1"]) == status
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1 and err.startswith(line), err


def test_a_profile_that_does_not_parse_names_the_line_and_column(tmp_path: Path) -> None:
    path = tmp_path / "broken.yaml"
    path.write_text("table: {betting_period: [1,\n", encoding="utf-8")
    with pytest.raises(ProfileError) as info:
        load_profile(path)
    assert str(info.value) == (
        f"profile {path}: not valid YAML: expected the node content, but found '<stream end>' at line 2, column 1"
    )


def test_a_profile_that_is_not_utf8_is_one_line(tmp_path: Path) -> None:
    path = tmp_path / "latin1.yaml"
    path.write_bytes(b"name: caf\xe9\n")
    with pytest.raises(ProfileError, match=rf"^cannot read profile {path}: 'utf-8' codec can't decode"):
        load_profile(path)
