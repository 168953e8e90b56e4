"""The documentation is self-contained: every relative link in the README, docs/, ci/, fixtures/ and examples/
resolves to a file of the repository (and a ``#anchor`` to one of its headings), docs/ never links with ``../``,
and docs/server.md lists every event name and every bet-record field the server has."""

from __future__ import annotations

import re
from pathlib import Path

from gameserver.events import EventKind
from gameserver.ledger import BET_COLUMNS

REPO = Path(__file__).resolve().parents[2]
_LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")
_FENCE = re.compile(r"```.*?```", re.S)


def _documents() -> list[Path]:
    found = [REPO / "README.md"]
    for pattern in ("docs/**/*.md", "ci/*.md", "fixtures/**/*.md", "examples/**/*.md"):
        found += sorted(REPO.glob(pattern))
    return found


def _slug(heading: str) -> str:
    """The anchor GitHub gives a heading: lower case, punctuation dropped, spaces as hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def _anchors(path: Path) -> set[str]:
    text = _FENCE.sub("", path.read_text(encoding="utf-8"))
    return {_slug(line.lstrip("#")) for line in text.splitlines() if line.startswith("#")}


def _broken(path: Path) -> list[str]:
    out: list[str] = []
    for target in _LINK.findall(_FENCE.sub("", path.read_text(encoding="utf-8"))):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target):  # https:, mailto: ...
            continue
        name, _, anchor = target.partition("#")
        dest = (path.parent / name) if name else path
        where = f"{path.relative_to(REPO)}: {target}"
        if name.startswith("../") and path.is_relative_to(REPO / "docs"):
            out.append(f"{where}: docs must not link with ../ (name the repository file by its path instead)")
        elif not dest.exists():
            out.append(f"{where}: no such file")
        elif anchor and dest.suffix == ".md" and anchor not in _anchors(dest):
            out.append(f"{where}: no heading for #{anchor}")
    return out


def test_every_relative_link_resolves() -> None:
    documents = _documents()
    assert len(documents) > 10
    assert [line for path in documents for line in _broken(path)] == []


def test_the_server_doc_lists_every_event_name_and_bet_record_field() -> None:
    text = (REPO / "docs" / "server.md").read_text(encoding="utf-8")
    events = text.split("### Event names", 1)[1].split("\n## ", 1)[0]
    fields = text.split("### Bet-record fields", 1)[1].split("\n## ", 1)[0]
    assert [k.value for k in EventKind if f"| `{k.value}` |" not in events] == []
    assert [c for c in BET_COLUMNS if f"| `{c}` |" not in fields] == []
