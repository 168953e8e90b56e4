"""The harness's YAML input files: one way to read them, one way to check their fields.

Every YAML file the harness takes from a person goes through :func:`read_text` and :func:`parse_yaml`, so each
kind says the same things the same way: ``cannot read KIND PATH: REASON`` for a file that cannot be read, and
``SOURCE: not valid YAML: PROBLEM at line L, column C`` (one line) for one that does not parse. Every error is an
:class:`~harness.errors.InputError` of the kind's own class (``ProfileError``, ``ScriptError``, ``BenchError``,
``ScheduleError``), passed in by the caller.

- Table profiles and incident scripts: :func:`load_profile` (by shipped name or path), :func:`available_profiles`,
  :func:`load_script`. The simulator validates the parsed documents (:func:`simulator.profile.profile_from_mapping`,
  :meth:`simulator.script.Script.from_data`); it reads no files itself.
- Bench files and fault schedules are read with :func:`read_text` and :func:`parse_yaml` by
  :func:`harness.bench.config.load_bench` and :func:`harness.faults.schedule.load_schedule`, which check their
  fields with :class:`Fields`: ``SOURCE: DOTTED.FIELD: WHAT IS ALLOWED; got VALUE``.

What ships with the package is found here and only here: :data:`FIXTURES` (benches, profiles, fault schedules,
rules, protocol vectors), :data:`FEATURES` (the certification suite) and :data:`DOCS` (the user documentation) are
the data packages ``xocdia_hil_fixtures``, ``xocdia_hil_features`` and ``xocdia_hil_docs`` (the repository's
``fixtures/``, ``features/`` and ``docs/``, mapped by ``setup.py``), located with
:mod:`importlib.resources`, so a wheel and an editable install read the same files. :func:`examples_folder` finds
the worked examples (``xocdia_hil_examples``, the repository's ``examples/``) the same way.
"""

from __future__ import annotations

import functools
import importlib.resources
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

from harness.errors import InputError
from simulator.profile import Profile, ProfileError, profile_from_mapping
from simulator.script import Script, ScriptError


def shipped_folder(package: str) -> Path:
    """The folder of an installed data package (``xocdia_hil_fixtures``, ``xocdia_hil_features``).

    Raises:
        ModuleNotFoundError: the package is not installed (an install from an old build: reinstall the package).
        NotADirectoryError: it is installed but not as files on disk (e.g. inside a zip).
    """
    root = importlib.resources.files(package)
    if not isinstance(root, Path) or not root.is_dir():
        raise NotADirectoryError(f"{package}: installed, but not as a folder on disk ({root})")
    return root


FIXTURES = shipped_folder("xocdia_hil_fixtures")
FEATURES = shipped_folder("xocdia_hil_features")
DOCS = shipped_folder("xocdia_hil_docs")


def examples_folder() -> Path:
    """The worked examples (the data package ``xocdia_hil_examples``, the repository's ``examples/``), one folder
    each; located when asked, so an install without them still imports this module.

    Raises:
        ModuleNotFoundError: the package is not installed (an install from an old build: reinstall the package).
        NotADirectoryError: it is installed but not as files on disk.
    """
    return shipped_folder("xocdia_hil_examples")


PROFILE_DIR = FIXTURES / "profiles"
SCHEDULE_DIR = FIXTURES / "faults"


def shipped_path(text: str | Path) -> Path:
    """A file named the way the repository names it: ``text`` itself when it exists (relative to the working
    folder), else the shipped file for a name under ``fixtures/`` or ``features/`` (so a step or a document that
    says ``fixtures/rules/RULES.md`` reads the installed copy); else ``text`` unchanged (the caller reports it)."""
    path = Path(text)
    if path.exists() or path.is_absolute() or not path.parts:
        return path
    roots = {"fixtures": FIXTURES, "features": FEATURES}
    root = roots.get(path.parts[0])
    return root.joinpath(*path.parts[1:]) if root is not None else path


def shipped_names(folder: Path) -> list[str]:
    """The names (file stems, sorted) of the ``*.yaml`` files in ``folder``: what ships there."""
    return sorted(p.stem for p in folder.glob("*.yaml"))


def shipped_file(text: str | Path, folder: Path) -> Path:
    """The YAML file a person named, by path or by shipped name, the first that exists of: ``text`` as a path (the
    lab's own file, relative to the working folder); the shipped copy of a path the repository uses
    (``fixtures/faults/chaos.yaml``, :func:`shipped_path`); ``folder/NAME.yaml`` for a bare shipped name given with
    or without ``.yaml`` (``chaos``, ``chaos.yaml``). Else ``text`` unchanged, for the caller's reader to report
    (with :func:`shipped_hint`). Never raises."""
    path = shipped_path(text)
    if path.exists():
        return path
    given = Path(text)
    if len(given.parts) == 1:
        stem = given.name[: -len(".yaml")] if given.name.endswith(".yaml") else given.name
        named = folder / f"{stem}.yaml"
        if named.exists():
            return named
    return given


def shipped_hint(folder: Path, what: str) -> Callable[[], str]:
    """A ``hint`` for :func:`read_text`: ``; shipped WHAT: a, b, c`` (the names :func:`shipped_file` accepts)."""
    return lambda: f"; shipped {what}: {', '.join(shipped_names(folder))}"


def read_text(
    path: Path,
    what: str,
    error: type[InputError],
    *,
    shown: object = None,
    hint: Callable[[], str] | None = None,
) -> str:
    """The text of a UTF-8 file.

    Raises:
        error: ``cannot read WHAT SHOWN: REASON`` (``SHOWN`` is ``path`` unless given), then ``hint()`` if given.
    """
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        reason = (exc.strerror if isinstance(exc, OSError) else None) or str(exc)
        more = hint() if hint is not None else ""
        raise error(f"cannot read {what} {path if shown is None else shown}: {reason}{more}") from None


# hot path: libyaml's safe loader where PyYAML has it (it builds the same Python values; a rig reads two YAML files)
_FAST_LOADER: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def parse_yaml(text: str, source: str, error: type[InputError]) -> Any:
    """The parsed document (``None`` for an empty one). A document libyaml refuses is parsed again by PyYAML's
    own loader, whose problem and position the error names.

    Raises:
        error: ``SOURCE: not valid YAML: PROBLEM at line L, column C`` (:func:`yaml_problem`).
    """
    try:
        return yaml.load(text, Loader=_FAST_LOADER)  # a safe loader: libyaml's when PyYAML has it
    except yaml.YAMLError:
        pass  # the pure-Python loader's problem and position, as every message names them
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise error(f"{source}: not valid YAML: {yaml_problem(exc)}") from None


def yaml_problem(exc: yaml.YAMLError) -> str:
    """One line for a YAML syntax error: the problem and where (PyYAML's own text spans several lines)."""
    mark = getattr(exc, "problem_mark", None)
    where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
    problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
    return f"{problem}{where}"


class Fields:
    """Field checks for one harness file (a bench, a fault schedule): each returns the value, typed, or raises
    ``error`` naming the file, the dotted field and what is allowed: ``SOURCE: WHERE: ALLOWED; got VALUE``.

    ``top`` names the document itself in a message (``where`` is ``""`` for it).
    """

    def __init__(self, source: str, error: type[InputError], top: str = "the document") -> None:
        self.source = source
        self.error = error
        self.top = top

    def fail(self, where: str, allowed: str, got: object) -> InputError:
        return self.error(f"{self.source}: {where or self.top}: {allowed}; got {got!r}")

    def mapping(self, value: object, where: str, keys: tuple[str, ...]) -> dict[str, Any]:
        """A mapping whose keys are all in ``keys`` (an unknown key is named, with the allowed ones)."""
        if not isinstance(value, dict):
            raise self.fail(where, "must be a mapping", value)
        unknown = sorted(set(value) - set(keys), key=str)
        if unknown:
            raise self.fail(
                f"{where}.{unknown[0]}".lstrip("."), f"unknown field; allowed: {', '.join(keys)}", unknown[0]
            )
        return value

    def choice(self, value: object, where: str, allowed: tuple[str, ...]) -> str:
        if value not in allowed:
            raise self.fail(where, f"must be one of {', '.join(allowed)}", value)
        return str(value)

    def number(self, value: object, where: str, low: float, high: float, allowed: str = "") -> float:
        """A number in ``[low, high]``; ``allowed`` replaces the message's ``must be a number in [LOW, HIGH]``."""
        if isinstance(value, bool) or not isinstance(value, int | float) or not low <= value <= high:
            raise self.fail(where, allowed or f"must be a number in [{low:g}, {high:g}]", value)
        return float(value)

    def whole(self, value: object, where: str, low: int, high: int) -> int:
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            raise self.fail(where, f"must be a whole number in [{low}, {high}]", value)
        return value

    def flag(self, value: object, where: str) -> bool:
        if not isinstance(value, bool):
            raise self.fail(where, "must be true or false", value)
        return value


def available_profiles() -> list[str]:
    """Names of the profiles shipped in ``fixtures/profiles``."""
    return shipped_names(PROFILE_DIR)


def load_profile(name_or_path: str | Path) -> Profile:
    """Load a profile by shipped name (``standard``, ``standard.yaml``) or by file path (a lab's own file, or a
    repository path such as ``fixtures/profiles/standard.yaml``, read from the shipped copy): :func:`shipped_file`.

    Raises:
        ProfileError: no such profile or file, YAML that does not parse, or an invalid field (the message names
            the file and the field: ``profile PATH: DOTTED.FIELD: ...``).
    """
    text = str(name_or_path)
    path = shipped_file(text, PROFILE_DIR)
    if not path.exists() and not (text.endswith((".yaml", ".yml")) or "/" in text):
        raise ProfileError(f"unknown profile {text!r}; shipped profiles: {', '.join(available_profiles())}")
    if not path.exists():
        raise ProfileError(f"profile file not found: {path}")
    return _profile_from_text(read_text(path, "profile", ProfileError), f"profile {path}")


@functools.lru_cache(maxsize=16)
def _profile_from_text(text: str, source: str) -> Profile:
    """The profile a file's text describes (a frozen value: one parse per distinct text and source, as every rig
    and every fault seed loads its bench's profile again). Raises ProfileError (not cached)."""
    return profile_from_mapping(parse_yaml(text, source, ProfileError), source)


def load_script(path: str | Path) -> Script:
    """Read a YAML incident script (a list of steps; an empty file has none).

    Raises:
        ScriptError: an unreadable file, YAML that does not parse, or an invalid step (``PATH[INDEX].FIELD: ...``).
    """
    text = read_text(Path(path), "script", ScriptError, shown=path)
    return Script.from_data(parse_yaml(text, f"cannot read script {path}", ScriptError), str(path))
