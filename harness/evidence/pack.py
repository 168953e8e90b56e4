"""Writing an evidence pack: one folder, made by one ``certify --evidence DIR`` run, never edited afterwards.

:class:`PackWriter` is used by ``certify`` in three calls: made from the options before anything runs (the folder
must be absent or empty, the signing key must load, the pack it amends must read: each refused in one line
before a scenario runs); :meth:`PackWriter.start` before pytest (the system's identification at the start, the
chained feed opened); :meth:`PackWriter.finish` after (the identification at the end and the change list, the
verdicts, the clause matrix, the scenarios' traces, the fault events, the bench file, JUnit XML, then the manifest
listing every file with its SHA-256, and its signature). While pytest runs, :meth:`PackWriter.follow` chains every
event the workers append to the run's feed file as it is appended (:mod:`harness.evidence.chain`).

The layout (docs/evidence.md)::

    manifest.json  manifest.sig  feed.jsonl  verdicts.json  junit.xml  faults.jsonl
    clause-matrix.json  clause-matrix.md  identification/start.json  identification/end.json
    bench/FILE  results/…  (the allure results: steps, serial traces, timelines, verdicts)  explored/…
"""

from __future__ import annotations

import json
import platform
import shutil
import socket
import sys
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import harness
from harness.bench.config import Bench
from harness.cert.suite_version import installed_version
from harness.errors import InputError, XocdiaError
from harness.evidence.chain import FEED_FILE, ChainFollower, ChainWriter, genesis
from harness.evidence.digest import sha256_bytes, sha256_file, tree_digest
from harness.evidence.identity import Identification, identify_bench, identity_changes
from harness.evidence.junit import JUNIT_FILE, junit_xml
from harness.evidence.manifest import FORMAT, MANIFEST_FILE, PackError, encode_manifest, manifest_digest, read_manifest
from harness.evidence.people import bench_people, check_person
from harness.evidence.signing import SIGNATURE_FILE, load_private_key, sign
from harness.evidence.verdicts import VERDICTS_FILE, counts, verdicts
from harness.feed import FeedKind, encode_line
from harness.files import FEATURES

IDENTITY_START = "identification/start.json"
IDENTITY_END = "identification/end.json"
FAULTS_FILE = "faults.jsonl"
#: What ``certify`` leaves in its report folder that the pack carries, and under which name.
REPORT_FILES = {"clause-matrix.json": "clause-matrix.json", "clause-matrix.md": "clause-matrix.md"}
REPORT_FOLDERS = {"allure-results": "results", "explored": "explored"}


def utc_now() -> str:
    """The wall clock in UTC, ISO 8601 to the second with a ``Z``."""
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def kit_version() -> str:
    """The installed ``xocdia-hil`` version (``unknown`` from a bare checkout)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("xocdia-hil")
    except PackageNotFoundError:
        return "unknown"


@dataclass(frozen=True)
class PackOptions:
    """``--evidence DIR`` and the options that go with it."""

    folder: Path
    sign_key: Path | None = None
    performer: str | None = None
    approver: str | None = None
    amends: Path | None = None


@dataclass(frozen=True)
class RunFacts:
    """What the run is, as ``certify`` chose it: the bench, the feature folders read (absolute; the shipped suite
    is :data:`~harness.files.FEATURES`), the tag expression, the workers and the exploration's seed."""

    bench: Bench
    folders: Sequence[Path]
    tags: str = ""
    workers: int = 0
    explore_seed: int | None = None


@dataclass(frozen=True)
class PackResult:
    """A finished pack: its folder, report id, verdict, whether it is signed, and the identification changes
    during the run (empty: none)."""

    folder: Path
    report_id: str
    verdict: str
    signed: bool
    changes: tuple[str, ...] = ()
    identified: bool = True
    note: str = ""


def refuse_non_empty(folder: Path, option: str = "--evidence") -> None:
    """A pack is never written over or into another folder's content.

    Raises:
        PackError: ``folder`` is a file, or a folder with anything in it.
    """
    if folder.exists() and (not folder.is_dir() or any(folder.iterdir())):
        raise PackError(
            f"{option} {folder}: exists and is not empty; a pack is never edited in place "
            "(choose a new folder; to amend a pack, --amends OLD_PACK with a new folder)"
        )


def previous_version(path: Path) -> dict[str, Any]:
    """The ``amends`` record of the pack at ``path``: its report id, version and manifest digest.

    Raises:
        PackError: ``path`` is not a readable evidence pack.
    """
    manifest, data = read_manifest(path)
    return {
        "report_id": manifest.get("report_id"),
        "version": manifest.get("version", 1),
        "manifest_sha256": manifest_digest(data),
        "folder": path.resolve().name,
    }


def feature_digests(folders: Sequence[Path]) -> dict[str, str]:
    """Each ``.feature`` file under ``folders`` (the full shipped suite when none is named), as ``shipped/PATH``
    or ``FOLDER/PATH``, with its SHA-256."""
    out: dict[str, str] = {}
    for folder in folders or [FEATURES]:
        label = "shipped" if folder == FEATURES else str(folder)
        for path in sorted(folder.rglob("*.feature")):
            out[f"{label}/{path.relative_to(folder).as_posix()}"] = sha256_file(path)
    return out


class PackWriter:
    """One pack being written (module docstring). The performer and approver are the options', else those of
    ``bench_file``'s ``evidence`` section (:mod:`harness.evidence.people`). ``identify`` takes a bench's
    identification (the system's own, its lines', the lab's digests):
    :func:`harness.evidence.identity.identify_bench` unless given.

    Raises (when made):
        PackError: the folder exists and is not empty, or the pack to amend does not read.
        MissingExtra: a signing key is given and ``cryptography`` (the ``evidence`` extra) is not installed.
        KeyFileError: the signing key does not load.
        PeopleError: a performer or approver that is not one line of text, or a bad ``evidence`` section.
    """

    def __init__(
        self,
        options: PackOptions,
        bench_file: Path | None = None,
        identify: Callable[[Bench], Identification] = identify_bench,
    ) -> None:
        refuse_non_empty(options.folder)
        self.options = options
        self.folder = options.folder
        self.identify = identify
        self.key = load_private_key(options.sign_key) if options.sign_key is not None else None
        self.amends = previous_version(options.amends) if options.amends is not None else None
        self.performer = check_person(options.performer, "--performer") if options.performer is not None else None
        self.approver = check_person(options.approver, "--approver") if options.approver is not None else None
        people = bench_people(bench_file) if bench_file is not None else dict.fromkeys(("performer", "approver"))
        self.performer = self.performer or people["performer"]
        self.approver = self.approver or people["approver"]
        self.report_id = str(uuid.uuid4())
        self.facts: RunFacts | None = None
        self.started_at = ""
        self.start_identity: Identification | None = None
        self.chain: ChainWriter | None = None
        self.kit: dict[str, str] = {}

    def start(self, facts: RunFacts) -> None:
        """Take the identification at the start, create the folder, open the chained feed (its first line notes
        the identification).

        Raises:
            PackError: the folder cannot be created.
            InputError: the bench's identification is refused as bad input (``identify.files`` matching no file).
        """
        self.facts = facts
        self.start_identity = self._identify(at_end=False)
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise PackError(f"--evidence {self.folder}: cannot create the folder ({exc.strerror})") from None
        refuse_non_empty(self.folder)
        self.started_at = utc_now()
        self.kit = {"version": kit_version(), "harness_sha256": tree_digest(Path(harness.__file__).parent)}
        self.chain = ChainWriter(self.folder / FEED_FILE, genesis(self.report_id))
        self._note("identification", "at the start", self.start_identity)

    def follow(self, feed_file: Path) -> ChainFollower:
        """A started follower chaining what is appended to ``feed_file`` into the pack's feed."""
        if self.chain is None:
            raise RuntimeError("PackWriter.follow before start")
        follower = ChainFollower(feed_file, self.chain)
        follower.start()
        return follower

    def _identify(self, at_end: bool = True) -> Identification:
        """The bench's identification now. A server that cannot be reached or whose ``identify()`` fails is
        recorded as not identified, with the reason; at the start, bad input (the bench file's ``identify.files``)
        is raised, before the pack's folder is made."""
        assert self.facts is not None
        try:
            return self.identify(self.facts.bench)
        except XocdiaError as exc:
            if isinstance(exc, InputError) and not at_end:
                raise
            return Identification(
                identified=False, note=f"the identification could not be taken: {exc}", taken_at=utc_now()
            )

    def _note(self, what: str, detail: str, ident: Identification) -> None:
        assert self.chain is not None
        summary = ident.name or ident.note or "identified"
        data = {"who": "evidence", "what": what, "detail": f"{detail}: {summary}", "components": len(ident.components)}
        self.chain.append(encode_line(0, 0.0, FeedKind.NOTE, data))

    def finish(self, report: Path, matrix: dict[str, Any] | None, exit_status: int) -> PackResult:
        """Take the identification at the end, copy the run's files in, write the manifest and sign it.

        Raises:
            PackError: a file of the pack cannot be written.
        """
        assert self.facts is not None and self.chain is not None and self.start_identity is not None
        end_identity = self._identify()
        changes = tuple(identity_changes(self.start_identity, end_identity))
        self._note("identification", "at the end" + (f" ({len(changes)} changes)" if changes else ""), end_identity)
        self.chain.close()
        try:
            return self._write(report, matrix, exit_status, end_identity, changes)
        except OSError as exc:
            raise PackError(f"--evidence {self.folder}: cannot write the pack ({exc})") from None

    def _write(
        self,
        report: Path,
        matrix: dict[str, Any] | None,
        exit_status: int,
        end_identity: Identification,
        changes: tuple[str, ...],
    ) -> PackResult:
        assert self.facts is not None and self.chain is not None and self.start_identity is not None
        folder, bench = self.folder, self.facts.bench
        _write_json(folder / IDENTITY_START, self.start_identity.to_json())
        _write_json(folder / IDENTITY_END, end_identity.to_json())
        for name, target in REPORT_FILES.items():
            if (report / name).is_file():
                shutil.copyfile(report / name, folder / target)
        for name, target in REPORT_FOLDERS.items():
            if (report / name).is_dir():
                shutil.copytree(report / name, folder / target)
        bench_copy = f"bench/{bench.path.name}"
        (folder / "bench").mkdir(exist_ok=True)
        shutil.copyfile(bench.path, folder / bench_copy)
        doc = verdicts(matrix, exit_status)
        _write_json(folder / VERDICTS_FILE, doc)
        _write_faults(folder / FEED_FILE, folder / FAULTS_FILE)
        table = {str(r["field"]): r["value"] for r in (matrix or {}).get("table", [])}
        tally = counts(doc)
        manifest: dict[str, Any] = {
            "format": FORMAT,
            "report_id": self.report_id,
            "version": (int(self.amends["version"]) + 1) if self.amends else 1,
            "amends": self.amends,
            "kit": self.kit,
            "suite": {"version": str(installed_version()), "features": feature_digests(self.facts.folders)},
            "bench": {
                "name": bench.name,
                "file": bench_copy,
                "sha256": sha256_file(bench.path),
                "dialect": bench.dialect_spec,
                "profile": bench.profile,
                "server": bench.server.kind,
                "transport": bench.transport,
            },
            "table_configuration": table,
            "seeds": {"bench": bench.seed, "explore": self.facts.explore_seed},
            "host": {"name": socket.gethostname(), "platform": platform.platform(), "python": sys.version.split()[0]},
            "started_at": self.started_at,
            "ended_at": utc_now(),
            "performer": self.performer,
            "approver": self.approver,
            "selection": {
                "tags": self.facts.tags,
                "features": [("shipped" if f == FEATURES else str(f)) for f in self.facts.folders] or ["shipped"],
                "workers": self.facts.workers,
            },
            "amendment": None,
            "verdict": {"result": doc["verdict"], "exit_status": exit_status, **tally},
            "identification": {
                "start": IDENTITY_START,
                "end": IDENTITY_END,
                "identified": self.start_identity.identified,
                "note": self.start_identity.note,
                "changed": bool(changes),
                "changes": list(changes),
            },
            "feed": {
                "file": FEED_FILE,
                "lines": self.chain.count,
                "origin": self.report_id,
                "genesis": self.chain.genesis,
                "head": self.chain.head,
            },
            "files": {},
        }
        (folder / JUNIT_FILE).write_bytes(junit_xml(doc, manifest))
        signed = seal(folder, manifest, self.key)
        return PackResult(
            folder,
            self.report_id,
            doc["verdict"],
            signed,
            changes,
            self.start_identity.identified,
            self.start_identity.note,
        )


def seal(folder: Path, manifest: dict[str, Any], key: Any | None) -> bool:
    """Fill ``manifest["files"]`` with every file under ``folder`` but the manifest and its signature, write
    ``manifest.json`` and, given ``key``, ``manifest.sig``; returns whether it signed."""
    manifest["files"] = {
        path.relative_to(folder).as_posix(): sha256_file(path)
        for path in sorted(folder.rglob("*"))
        if path.is_file() and path.relative_to(folder).as_posix() not in (MANIFEST_FILE, SIGNATURE_FILE)
    }
    data = encode_manifest(manifest)
    (folder / MANIFEST_FILE).write_bytes(data)
    if key is None:
        return False
    (folder / SIGNATURE_FILE).write_bytes(sign(key, data))
    return True


def _write_json(path: Path, doc: object) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


def _write_faults(feed: Path, out: Path) -> None:
    """``faults.jsonl``: every ``fault`` event of the chained feed, each with its line number there (``line``,
    1-based) and the line's digest, so each fault listed is traced to the chained observation."""
    lines = []
    with feed.open("rb") as f:
        for number, raw in enumerate(f, start=1):
            try:
                event = json.loads(raw).get("event")
            except (ValueError, AttributeError):
                continue
            if isinstance(event, dict) and event.get("kind") == FeedKind.FAULT.value:
                digest = sha256_bytes(raw.rstrip(b"\n"))
                lines.append(json.dumps({"line": number, "sha256": digest, "event": event}, ensure_ascii=False))
    out.write_text("".join(line + "\n" for line in lines), encoding="utf-8")


def amend(
    old: Path,
    new: Path,
    key: Any | None,
    reason: str,
    performer: str | None = None,
    approver: str | None = None,
) -> PackResult:
    """A new version of the pack at ``old`` in the new folder ``new``: its files copied unchanged, a new report id,
    ``version`` one more, ``amends`` naming the old one, ``amendment`` the reason, the performer or approver
    replaced where given; signed with ``key`` when given. The old pack is not touched.

    Raises:
        PackError: ``new`` is not empty, ``old`` is not a readable pack, or the reason is empty.
    """
    refuse_non_empty(new, "evidence amend")
    if not reason.strip():
        raise PackError("evidence amend --reason: must say why the report is amended (one line)")
    manifest, _data = read_manifest(old)
    previous = previous_version(old)
    new.mkdir(parents=True, exist_ok=True)
    for name in manifest.get("files", {}):
        target = new / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(old / name, target)
    amended = dict(manifest)
    amended["report_id"] = str(uuid.uuid4())
    amended["version"] = int(previous["version"]) + 1
    amended["amends"] = previous
    amended["amendment"] = {"reason": reason.strip(), "at": utc_now(), "by": performer or approver}
    if performer is not None:
        amended["performer"] = check_person(performer, "--performer")
    if approver is not None:
        amended["approver"] = check_person(approver, "--approver")
    signed = seal(new, amended, key)
    return PackResult(new, amended["report_id"], str(amended["verdict"]["result"]), signed)
