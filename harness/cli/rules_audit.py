"""``xocdia-hil rules-audit [--json] [--allow FILE|shipped] [--readings DIR] [DOCS...]``: the published rules documents
read through their readings and compared with the English and the certified rules (DOC-1).

Without ``DOCS`` it audits the five documents shipped in ``fixtures/rules/documents/``. Text by default (the
clause × language table, the RTP each document implies, every difference quoting its line, the verdict);
``--json`` prints one object (:func:`harness.rules.report.to_json`). Exit status 0 when nothing fails, 1 when a
document contradicts the English on money or the English contradicts the certified rules (unless ``--allow``
names the finding), 2 for bad input: a missing file, a document in an unknown language or without a reading, a
reading whose cited line does not say what it claims.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from harness.cli.common import CliError
from harness.files import shipped_path
from harness.rules.audit import ALLOWED_FINDINGS, load_allow_list, run_audit
from harness.rules.reading import READINGS_DIR
from harness.rules.report import to_json, to_text

#: ``--allow shipped``: the allow-list that ships with the documents.
SHIPPED = "shipped"


def register(subparsers: Any) -> None:
    p = subparsers.add_parser("rules-audit", help="check the rules documents against the English and the game")
    p.add_argument(
        "docs", nargs="*", type=shipped_path, metavar="DOCS", help="rules documents (default: the shipped five)"
    )
    p.add_argument("--json", action="store_true", help="print one JSON object instead of text")
    p.add_argument(
        "--allow",
        type=allow_list_path,
        metavar="FILE|shipped",
        help="allow-list of accepted failing findings (YAML); 'shipped' is the one shipped with the documents",
    )
    p.add_argument("--readings", type=shipped_path, default=READINGS_DIR, metavar="DIR", help="folder of reading files")
    p.set_defaults(func=run)


def allow_list_path(text: str) -> Path:
    """argparse type of ``--allow``: ``shipped`` is the shipped allow-list; any other text is a path (a repository
    path such as ``fixtures/rules/documents/allowed-findings.yaml`` reads the shipped copy). Never raises: a missing
    file is reported by :func:`harness.rules.audit.load_allow_list`."""
    return ALLOWED_FINDINGS if text == SHIPPED else shipped_path(text)


def run(args: argparse.Namespace) -> int:
    if args.allow is not None and not args.allow.exists():
        raise CliError(f"--allow {args.allow}: no such file (a YAML allow-list, or '{SHIPPED}' for the shipped one)")
    allow = load_allow_list(args.allow) if args.allow is not None else ()
    result = run_audit(args.docs, args.readings, allow)
    if args.json:
        print(json.dumps(to_json(result), indent=2, ensure_ascii=False))
    else:
        print(to_text(result))
    return 0 if result.passed else 1
