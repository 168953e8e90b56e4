"""``xocdia-hil rules-audit [--json] [--allow FILE] [--readings DIR] [DOCS...]``: the published rules documents
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

from harness.rules.audit import load_allow_list, run_audit
from harness.rules.reading import READINGS_DIR
from harness.rules.report import to_json, to_text


def register(subparsers: Any) -> None:
    p = subparsers.add_parser("rules-audit", help="check the rules documents against the English and the game")
    p.add_argument("docs", nargs="*", type=Path, metavar="DOCS", help="rules documents (default: the shipped five)")
    p.add_argument("--json", action="store_true", help="print one JSON object instead of text")
    p.add_argument("--allow", type=Path, metavar="FILE", help="allow-list of accepted failing findings (YAML)")
    p.add_argument("--readings", type=Path, default=READINGS_DIR, metavar="DIR", help="folder of reading files")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    allow = load_allow_list(args.allow) if args.allow is not None else ()
    result = run_audit(args.docs, args.readings, allow)
    if args.json:
        print(json.dumps(to_json(result), indent=2, ensure_ascii=False))
    else:
        print(to_text(result))
    return 0 if result.passed else 1
