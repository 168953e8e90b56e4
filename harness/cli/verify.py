"""``xocdia-hil verify PACK [--key PUB]``: verify an evidence pack offline (docs/evidence.md): every file's
SHA-256, the feed's hash chain, the signature (against ``--key`` when given) and the amended versions beside it.
Prints a one-screen summary; exit 0 when everything matches, 1 naming the first file or feed line that does not,
2 for a folder that is not a pack or a key that does not load."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from harness.evidence.verify import summary, verify_pack


def register(subparsers: Any) -> None:
    p = subparsers.add_parser("verify", help="verify an evidence pack: digests, the feed's chain, the signature")
    p.add_argument("pack", type=Path, metavar="PACK")
    p.add_argument("--key", type=Path, default=None, metavar="PUB", help="the lab's public key (FILE.pub of keygen)")
    p.add_argument("--json", action="store_true", help="print the result as one JSON object")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    result = verify_pack(args.pack, args.key)
    if args.json:
        doc = {
            "pack": str(args.pack),
            "ok": result.ok,
            "report_id": result.manifest.get("report_id"),
            "verdict": result.manifest.get("verdict", {}).get("result"),
            "signature": result.signature,
            "problems": list(result.problems),
            "previous": result.previous,
        }
        print(json.dumps(doc, indent=2))
    else:
        print("\n".join(summary(result)))
    return 0 if result.ok else 1
