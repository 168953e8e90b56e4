"""Who performed and who approved a run: ``--performer``/``--approver``, else the bench file's ``evidence``
section::

    evidence:
      performer: "A. Tester <a.tester@lab.example>"
      approver: "B. Head, technical manager"

Both optional; each must be non-empty text when given (one line, at most 200 characters).
"""

from __future__ import annotations

from pathlib import Path

import yaml

from harness.errors import InputError

FIELDS = ("performer", "approver")
MAX_LENGTH = 200


class PeopleError(InputError):
    """A performer or approver that is not one line of text (the message names the option or field)."""


def check_person(value: object, where: str) -> str:
    """``value`` as a performer or approver named at ``where`` (an option or a bench file field).

    Raises:
        PeopleError: not text, empty, more than one line or longer than :data:`MAX_LENGTH`.
    """
    if not isinstance(value, str) or not value.strip() or "\n" in value or len(value) > MAX_LENGTH:
        raise PeopleError(f"{where}: must be one line of text (a name), 1 to {MAX_LENGTH} characters; got {value!r}")
    return value.strip()


def bench_people(path: Path) -> dict[str, str | None]:
    """``performer`` and ``approver`` from the ``evidence`` section of the bench file at ``path`` (None each when
    the file has none).

    Raises:
        PeopleError: the section is not a mapping, has another key, or a value that is not one line of text.
    """
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError):
        return dict.fromkeys(FIELDS)  # the bench loader has read this file already and reports its problems
    section = raw.get("evidence") if isinstance(raw, dict) else None
    if section is None:
        return dict.fromkeys(FIELDS)
    if not isinstance(section, dict):
        raise PeopleError(f"{path.name}: evidence: must be a mapping with {' and/or '.join(FIELDS)}")
    for key in section:
        if key not in FIELDS:
            raise PeopleError(f"{path.name}: evidence.{key}: unknown field (allowed: {', '.join(FIELDS)})")
    return {
        key: check_person(section[key], f"{path.name}: evidence.{key}") if key in section else None for key in FIELDS
    }
