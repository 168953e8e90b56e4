"""``xocdia-hil evidence``: the signed evidence pack's tools (docs/evidence.md).

- ``evidence keygen FILE``: a new Ed25519 key pair, ``FILE`` (private, mode 0600) and ``FILE.pub``.
- ``evidence diff PACK_A PACK_B``: what changed in the system's identification and in the verdicts (exit 0 when
  nothing did, 1 when something did).
- ``evidence junit PACK OUT.xml``: the pack's verdicts as JUnit XML (the pack carries ``junit.xml`` too).
- ``evidence amend OLD_PACK NEW_PACK --reason TEXT [--sign-key FILE]``: a new signed version that references the
  old one by report id and manifest digest; the old pack is never edited.

Also the ``certify`` options of a pack (:func:`add_certify_options`, :func:`pack_writer`). ``cryptography`` (the
``evidence`` extra) is imported only when a key is made, a manifest signed or a signature checked.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from harness.evidence.diff import pack_diff
from harness.evidence.junit import junit_xml
from harness.evidence.manifest import PackError, read_manifest
from harness.evidence.pack import PackOptions, PackResult, PackWriter, amend
from harness.evidence.signing import keygen, load_private_key
from harness.evidence.verdicts import VERDICTS_FILE


def register(subparsers: Any) -> None:
    p = subparsers.add_parser("evidence", help="signed evidence packs: keys, comparison, JUnit export, amendments")
    sub = p.add_subparsers(dest="evidence_command", metavar="ACTION", required=True)
    k = sub.add_parser("keygen", help="write a new Ed25519 signing key FILE (mode 0600) and FILE.pub")
    k.add_argument("file", type=Path, metavar="FILE")
    k.set_defaults(func=_keygen)
    d = sub.add_parser("diff", help="what changed in the system's identification and the verdicts, A to B")
    d.add_argument("a", type=Path, metavar="PACK_A")
    d.add_argument("b", type=Path, metavar="PACK_B")
    d.add_argument("--json", action="store_true", help="print the changes as one JSON object")
    d.set_defaults(func=_diff)
    j = sub.add_parser("junit", help="write the pack's verdicts as JUnit XML")
    j.add_argument("pack", type=Path, metavar="PACK")
    j.add_argument("out", type=Path, metavar="OUT.xml")
    j.set_defaults(func=_junit)
    a = sub.add_parser("amend", help="a new signed version of a pack that references the old one")
    a.add_argument("old", type=Path, metavar="OLD_PACK")
    a.add_argument("new", type=Path, metavar="NEW_PACK")
    a.add_argument("--reason", required=True, help="why the report is amended (recorded in the new manifest)")
    a.add_argument("--sign-key", type=Path, default=None, metavar="FILE", help="Ed25519 private key to sign with")
    a.add_argument("--performer", default=None, help="who performed the run (replaces the old pack's)")
    a.add_argument("--approver", default=None, help="who approves the report (replaces the old pack's)")
    a.set_defaults(func=_amend)


def _keygen(args: argparse.Namespace) -> int:
    public, kid = keygen(args.file)
    print(f"private key: {args.file} (mode 0600: keep it secret)")
    print(f"public key: {public} (give it to whoever verifies: xocdia-hil verify PACK --key {public})")
    print(f"key id: {kid}")
    return 0


def _diff(args: argparse.Namespace) -> int:
    identity, verdicts = pack_diff(args.a, args.b)
    if args.json:
        print(json.dumps({"identification": identity, "verdicts": verdicts}, indent=2))
        return 1 if identity or verdicts else 0
    print(f"A: {args.a}  B: {args.b}")
    print("identification of the system under test: " + ("changed" if identity else "unchanged"))
    for line in identity:
        print(f"  {line}")
    print("verdicts: " + ("changed" if verdicts else "unchanged"))
    for line in verdicts:
        print(f"  {line}")
    return 1 if identity or verdicts else 0


def _junit(args: argparse.Namespace) -> int:
    manifest, _data = read_manifest(args.pack)
    try:
        doc = json.loads((args.pack / VERDICTS_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise PackError(f"{args.pack / VERDICTS_FILE}: cannot be read ({exc})") from None
    try:
        args.out.write_bytes(junit_xml(doc, manifest))
    except OSError as exc:
        raise PackError(f"{args.out}: cannot write ({exc.strerror})") from None
    print(f"junit: {args.out} ({len(doc.get('scenarios', {}))} testcases)")
    return 0


def _amend(args: argparse.Namespace) -> int:
    key = load_private_key(args.sign_key, "xocdia-hil evidence amend --sign-key") if args.sign_key else None
    result = amend(args.old, args.new, key, args.reason, args.performer, args.approver)
    print(f"evidence: {result.folder}: report {result.report_id}, amends {args.old}; " + _signed(result))
    return 0


def _signed(result: PackResult) -> str:
    return "signed" if result.signed else "UNSIGNED (no --sign-key)"


def add_certify_options(p: argparse.ArgumentParser) -> None:
    """``certify``'s evidence options: ``--evidence``, ``--sign-key``, ``--performer``, ``--approver``,
    ``--amends``."""
    p.add_argument("--evidence", type=Path, default=None, metavar="DIR", help="write a signed evidence pack to DIR")
    p.add_argument("--sign-key", type=Path, default=None, metavar="FILE", help="sign the pack with this Ed25519 key")
    p.add_argument("--performer", default=None, help="who performs the run (else the bench file's evidence section)")
    p.add_argument("--approver", default=None, help="who approves the report (else the bench file's evidence section)")
    p.add_argument("--amends", type=Path, default=None, metavar="PACK", help="this run's pack is a new version of PACK")


def pack_writer(args: argparse.Namespace, bench_file: Path) -> PackWriter | None:
    """The pack ``certify`` writes (None without ``--evidence``), checked before anything runs; the performer and
    approver default to ``bench_file``'s ``evidence`` section.

    Raises:
        CliError: ``--sign-key``, ``--performer``, ``--approver`` or ``--amends`` without ``--evidence``.
        PackError, KeyFileError, MissingExtra, PeopleError: as :class:`~harness.evidence.pack.PackWriter`.
    """
    from harness.cli.common import CliError

    if args.evidence is None:
        given = [
            o
            for o, v in (
                ("--sign-key", args.sign_key),
                ("--performer", args.performer),
                ("--approver", args.approver),
                ("--amends", args.amends),
            )
            if v is not None
        ]
        if given:
            raise CliError(f"{', '.join(given)}: only with --evidence DIR (the pack they go into)")
        return None
    return PackWriter(PackOptions(args.evidence, args.sign_key, args.performer, args.approver, args.amends), bench_file)


def pack_lines(result: PackResult) -> list[str]:
    """What ``certify`` prints about the pack it wrote."""
    lines = [f"evidence: {result.folder}: report {result.report_id}, {result.verdict}, " + _signed(result)]
    if not result.identified:
        lines.append(f"evidence: system under test: {result.note or 'not identified by the system'}")
    if result.changes:
        lines.append(f"evidence: the system's identification CHANGED during the run ({len(result.changes)}):")
        lines += [f"  {change}" for change in result.changes]
    return lines
