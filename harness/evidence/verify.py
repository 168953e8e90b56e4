"""Verifying an evidence pack offline (``xocdia-hil verify PACK [--key PUB]``).

:func:`verify_pack` checks the manifest's signature (against ``--key`` when given), recomputes the SHA-256 of
every file the manifest lists and looks for files it does not list, recomputes the feed's hash chain from its
genesis to the head the manifest records (a feed whose digest does not match is named by its first line that does
not fit), and follows ``amends`` to the previous version when that pack lies beside this one (a folder in the same
parent folder whose manifest has that report id), checking the digest of its manifest and verifying it in turn.
Problems are listed in that order; the first names the first file or feed line that does not match.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.evidence.chain import check_chain, genesis
from harness.evidence.digest import sha256_file
from harness.evidence.manifest import MANIFEST_FILE, PackError, manifest_digest, read_manifest
from harness.evidence.signing import SIGNATURE_FILE, check_signature, load_public_key

MAX_VERSIONS = 100
#: Identification changes the summary shows (all are in the manifest).
MAX_CHANGES_SHOWN = 4


@dataclass(frozen=True)
class Verification:
    """What :func:`verify_pack` found. ``ok``: no problem. ``signature``: ``signed (key …)``, ``unsigned`` or the
    signature's problem; ``previous``: one line on the amended version (empty when this is version 1)."""

    folder: Path
    manifest: dict[str, Any]
    problems: tuple[str, ...]
    checked_files: int
    feed_lines: int
    signature: str
    previous: str = ""
    notes: tuple[str, ...] = field(default=())

    @property
    def ok(self) -> bool:
        return not self.problems


def verify_pack(folder: Path, key: Path | None = None, _depth: int = 0) -> Verification:
    """Verify the pack in ``folder`` (module docstring); never raises for a pack's content.

    Raises:
        PackError: ``folder`` holds no ``manifest.json`` (a manifest that does not parse is a problem found).
        MissingExtra: the pack is signed or ``key`` is given, and ``cryptography`` is not installed.
        KeyFileError: ``key`` does not load.
    """
    trusted = load_public_key(key) if key is not None else None
    sig_path = folder / SIGNATURE_FILE
    try:
        manifest, data = read_manifest(folder)
    except PackError as exc:
        if not (folder / MANIFEST_FILE).is_file():
            raise
        unread: list[str] = [str(exc)]
        signature = "not checked (the manifest does not read)"
        try:
            raw = (folder / MANIFEST_FILE).read_bytes()
        except OSError:
            raw = None
        if raw is not None and sig_path.is_file():  # a signed manifest changed after signing: the root cause
            check = check_signature(sig_path.read_bytes(), raw, trusted)
            if not check.ok:
                unread.insert(0, check.problem)
                signature = f"signature INVALID: {check.problem}"
        return Verification(folder, {}, tuple(unread), 0, 0, signature)
    problems: list[str] = []
    if sig_path.is_file():
        check = check_signature(sig_path.read_bytes(), data, trusted)
        if check.ok:
            how = "matches --key" if check.trusted else "not checked against a trusted key: pass --key"
            signature = f"signed by key {check.key_id} ({how})"
        else:
            signature = f"signature INVALID: {check.problem}"
            problems.append(check.problem)
    else:
        signature = "unsigned"
        if trusted is not None:
            problems.append(f"{SIGNATURE_FILE}: missing; the pack is not signed (--key was given)")
    listed: dict[str, str] = manifest.get("files", {}) if isinstance(manifest.get("files"), dict) else {}
    feed = manifest.get("feed", {})
    feed_name = str(feed.get("file", "")) if isinstance(feed, dict) else ""
    chain_problem, feed_lines = "", 0
    if feed_name:
        origin = str(feed.get("origin", ""))
        chain = check_chain(folder / feed_name, genesis(origin), str(feed.get("head")), feed_name)
        feed_lines = chain.lines
        if feed.get("genesis") != genesis(origin):
            chain_problem = f"{MANIFEST_FILE}: the feed's genesis is not that of report {origin}"
        elif chain.problem:
            chain_problem = chain.problem
        elif chain.lines != feed.get("lines"):
            chain_problem = f"{feed_name}: {chain.lines} lines, the manifest says {feed.get('lines')}"
    else:
        chain_problem = f"{MANIFEST_FILE}: names no feed"
    if not listed:
        problems.append(f"{MANIFEST_FILE}: lists no files")
    for name, digest in listed.items():
        path = folder / name
        if not path.is_file():
            problems.append(f"{name}: missing (listed in the manifest)")
        elif sha256_file(path) != digest:
            if name == feed_name and chain_problem:  # the line that does not fit says more than the file's digest
                problems.append(f"{chain_problem}; the file's SHA-256 does not match the manifest")
                chain_problem = ""
            else:
                problems.append(f"{name}: SHA-256 does not match the manifest")
    for path in sorted(folder.rglob("*")):
        name = path.relative_to(folder).as_posix()
        if path.is_file() and name not in listed and name not in (MANIFEST_FILE, SIGNATURE_FILE):
            problems.append(f"{name}: not listed in the manifest (added after the run)")
    if chain_problem and (folder / feed_name).is_file():
        problems.append(chain_problem)
    previous = ""
    amends = manifest.get("amends")
    if isinstance(amends, dict):
        previous, problem = _previous(folder, amends, key, _depth)
        if problem:
            problems.append(problem)
    return Verification(folder, manifest, tuple(problems), len(listed), feed_lines, signature, previous)


def _previous(folder: Path, amends: dict[str, Any], key: Path | None, depth: int) -> tuple[str, str]:
    """One line on the amended version and the problem with it (empty when none)."""
    rid = str(amends.get("report_id"))
    found = find_pack(folder.resolve().parent, rid, exclude=folder.resolve())
    if found is None:
        return f"amends {rid} (version {amends.get('version')}): not found beside this pack, not verified", ""
    _manifest, data = read_manifest(found)
    if manifest_digest(data) != amends.get("manifest_sha256"):
        return (
            f"amends {rid}: {found.name}",
            f"{found.name}/{MANIFEST_FILE}: its digest is not the one this pack's amends records",
        )
    if depth >= MAX_VERSIONS:
        return f"amends {rid}: {found.name} (more than {MAX_VERSIONS} versions: not followed further)", ""
    result = verify_pack(found, key, depth + 1)
    if not result.ok:
        return f"amends {rid}: {found.name}", f"{found.name} (the amended version): {result.problems[0]}"
    return f"amends {rid} (version {amends.get('version')}): {found.name}, verified", ""


def find_pack(parent: Path, report_id: str, exclude: Path | None = None) -> Path | None:
    """The pack folder in ``parent`` whose manifest has ``report_id`` (None when there is none)."""
    for candidate in sorted(parent.iterdir()) if parent.is_dir() else []:
        if not candidate.is_dir() or candidate.resolve() == exclude:
            continue
        try:
            manifest, _data = read_manifest(candidate)
        except PackError:
            continue
        if manifest.get("report_id") == report_id:
            return candidate
    return None


def summary(result: Verification) -> list[str]:
    """The one-screen summary ``verify`` prints."""
    m = result.manifest
    status = "VERIFIED" if result.ok else "NOT VERIFIED"
    ident = m.get("identification", {})
    sut = _sut(result.folder, str(ident.get("start", "")), ident)
    verdict = m.get("verdict", {})
    scen = ", ".join(f"{k} {v}" for k, v in verdict.get("scenarios", {}).items()) or "none"
    clauses = ", ".join(f"{k} {v}" for k, v in verdict.get("clauses", {}).items()) or "none"
    gli = ", ".join(f"{k} {v}" for k, v in verdict.get("gli_references", {}).items())
    bench = m.get("bench", {})
    lines = [
        f"pack {result.folder}: {status}",
        f"report id: {m.get('report_id')} (version {m.get('version')}"
        + (f", amends {m['amends'].get('report_id')}" if isinstance(m.get("amends"), dict) else "")
        + ")",
        f"system under test: {sut}",
        "identification during the run: "
        + (f"CHANGED ({len(ident.get('changes', []))} differences)" if ident.get("changed") else "unchanged"),
        *[f"  {change}" for change in ident.get("changes", [])[:MAX_CHANGES_SHOWN]],
        f"verdict: {verdict.get('result')} (exit status {verdict.get('exit_status')})",
        f"scenarios: {scen}",
        f"clauses: {clauses}" + (f"; GLI references: {gli}" if gli else ""),
        f"bench: {bench.get('name')} ({bench.get('sha256')}), dialect {bench.get('dialect')}, seed "
        f"{m.get('seeds', {}).get('bench')}; suite {m.get('suite', {}).get('version')} "
        f"({len(m.get('suite', {}).get('features', {}))} feature files)",
        f"performed by: {m.get('performer') or '(not given)'}; approved by: {m.get('approver') or '(not given)'}",
        f"run: {m.get('started_at')} to {m.get('ended_at')} on {m.get('host', {}).get('name')}; "
        f"kit {m.get('kit', {}).get('version')}",
        f"files: {result.checked_files} listed; feed: {result.feed_lines} chained lines",
        f"signature: {result.signature}",
    ]
    if m.get("amendment"):
        lines.append(f"amendment: {m['amendment'].get('reason')}")
    if result.previous:
        lines.append(result.previous)
    if result.problems:
        lines.append(f"first mismatch: {result.problems[0]}")
        lines += [f"  also: {p}" for p in result.problems[1:6]]
        if len(result.problems) > 6:
            lines.append(f"  ... and {len(result.problems) - 6} more")
    return lines


def _sut(folder: Path, start_file: str, ident: dict[str, Any]) -> str:
    """One line on the system's identification at the start: name, version, build, component count; or the note
    when the system did not identify itself."""
    try:
        raw = json.loads((folder / start_file).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return "(identification unreadable)"
    if not isinstance(raw, dict):
        return "(identification unreadable)"
    components = raw.get("components") or []
    if not raw.get("identified"):
        note = raw.get("note") or ident.get("note") or "not identified by the system"
        return f"{note} ({len(components)} components from the bench)"
    parts = [str(raw.get(k)) for k in ("name", "version") if raw.get(k)]
    build = f", build {raw['build']}" if raw.get("build") else ""
    return f"{' '.join(parts) or '(unnamed)'}{build}, {len(components)} components"
