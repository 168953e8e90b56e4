"""``xocdia-hil dialects``: list the device dialects this installation knows, and check one (the conformance kit).

    xocdia-hil dialects [--json]
    xocdia-hil dialects check NAME|package.module:Class [--options YAML] [--seed N] [--no-certify]

``check`` runs, in order: the dialect's golden vectors (when it ships them), a seeded random round trip of every
message it carries, a framer fuzz, a device end ↔ server end loopback in virtual time, and (unless
``--no-certify``) a short certification run on the in-process bench with the table speaking the dialect. Each check
tests what the dialect declares it carries (its ``capabilities``), runs on its own (an exception fails that check
alone, named) and reports its status (PASS, FAIL, or SKIP for a check that does not apply) and its case count; a check
that ran no case fails. Exit 0 when every check passes or is skipped, 1 when one fails, 2 for an unknown dialect, a
class missing a part, or bad options. A ``module:Class`` is also looked for in the current working folder.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

from harness.cli.common import CliError, non_negative_int
from harness.files import FIXTURES
from harness.wire.dialects.base import Dialect
from harness.wire.dialects.conformance import (
    CheckResult,
    check_dialogue,
    check_fuzz,
    check_golden,
    check_round_trip,
    golden_skipped,
    guarded,
)
from harness.wire.dialects.registry import SHIPPED, dialect_class, installed, load_dialect, names

#: The scenarios of the short certification run (a tag expression): payouts, both voids, a re-shake, a
#: rearranged read and the reader's own failures.
SHORT_CERTIFY_TAGS = "clause:PAY-1 or clause:SH-4a or clause:SH-4b or clause:SH-2 or clause:SH-1 or clause:EQ-3"


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser("dialects", help="list the device dialects, or check one (the conformance kit)")
    p.add_argument("--json", action="store_true", help="print the list as JSON")
    p.set_defaults(func=run_list)
    sub = p.add_subparsers(dest="dialects_command", metavar="check")
    c = sub.add_parser("check", help="run the conformance kit on a dialect")
    c.add_argument("dialect", help="a dialect name, or package.module:ClassName")
    c.add_argument("--options", default="", help="the dialect's options as a YAML/JSON mapping (default none)")
    c.add_argument("--seed", type=non_negative_int, default=0, help="seed of the random frames (default 0)")
    c.add_argument("--frames", type=non_negative_int, default=2000, help="random round-trip frames (default 2000)")
    c.add_argument("--no-certify", action="store_true", help="skip the short in-process certification run")
    c.add_argument("--json", action="store_true", help="print the results as JSON")
    c.set_defaults(func=run_check)


def _origin(name: str) -> str:
    if name in SHIPPED:
        return "shipped"
    ep = installed().get(name)
    if ep is None:
        return "path"
    dist = ep.dist
    return f"entry point of {dist.metadata['Name']} {dist.version}" if dist is not None else "entry point"


def run_list(args: argparse.Namespace) -> int:
    rows: list[dict[str, Any]] = []
    for name in names():
        try:
            info = load_dialect(name).describe()
        except Exception as exc:  # an installed plugin that is broken: list it with why, do not hide it
            info = {"name": name, "error": str(exc)}
        info["origin"] = _origin(name)
        rows.append(info)
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    for row in rows:
        if "error" in row:
            print(f"{row['name']:<16} BROKEN: {row['error']}")
            continue
        carries = ",".join(row["carries"])
        print(f"{row['name']:<16} {row['dialogue']:<5} {carries:<34} {row['summary']} [{row['origin']}]")
    return 0


def _options(text: str) -> dict[str, Any]:
    if not text:
        return {}
    try:
        value = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise CliError(f"--options: not YAML/JSON: {exc}") from None
    if not isinstance(value, dict):
        raise CliError(f"--options: must be a mapping, e.g. '{{lines: {{bus: [BOWL]}}}}'; got {text!r}")
    return value


def _golden(dialect: Dialect) -> CheckResult:
    """The golden check: skipped when the dialect names no golden file; a file that cannot be read or parsed, or
    that holds no vector, fails it."""
    if not dialect.golden_file:
        return golden_skipped()
    path = FIXTURES / dialect.golden_file
    result = CheckResult("golden vectors")
    try:
        vectors = dialect.parse_golden(path.read_text(encoding="utf-8"))
    except OSError as exc:
        result.fail(f"{path}: cannot read: {exc.strerror}")
        return result
    except ValueError as exc:
        result.fail(f"{path}: {exc}")
        return result
    return check_golden(dialect.codec(), vectors, dialect.capabilities)


def _certify(spec: str, options: dict[str, Any]) -> CheckResult:
    """The short certification run: ``certify --bench in-process --dialect SPEC`` on a few scenarios."""
    return guarded(CheckResult("short certify (in-process)"), lambda result: _run_certify(spec, options, result))


def _run_certify(spec: str, options: dict[str, Any], result: CheckResult) -> None:
    with tempfile.TemporaryDirectory(prefix="xocdia-dialect-check-") as tmp:
        bench = Path(tmp) / "bench.yaml"
        devices = {"transport": "memory", "dialect": spec, **({"options": options} if options else {})}
        text = (FIXTURES / "benches" / "in-process.yaml").read_text(encoding="utf-8")
        data = yaml.safe_load(text)
        data["devices"] = devices
        data["name"] = "in-process"
        bench.write_text(yaml.safe_dump(data), encoding="utf-8")
        cmd = [sys.executable, "-m", "harness.cli", "certify", "--bench", str(bench), "--workers", "2"]
        cmd += ["--tags", SHORT_CERTIFY_TAGS, "--report", str(Path(tmp) / "report")]
        proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
        matrix_path = Path(tmp) / "report" / "clause-matrix.json"
        if matrix_path.exists():
            matrix = json.loads(matrix_path.read_text(encoding="utf-8"))
            result.cases = int(matrix["passed"]) + int(matrix["failed"])
            if matrix["failed"]:
                result.fail(f"{matrix['failed']} of {result.cases} scenarios failed")
        if proc.returncode != 0 and not result.failed:
            tail = (proc.stdout + proc.stderr).strip().splitlines()[-3:]
            result.fail(f"certify exited {proc.returncode}: {' | '.join(tail)}")
        result.note = f"tags: {SHORT_CERTIFY_TAGS}"


def _declared(dialect: Dialect) -> str:
    """The dialect's declaration in one line: its dialogue, its round ids, and what it carries and does not."""
    caps = dialect.capabilities
    have = [name for name, value in caps.as_dict().items() if value is True]
    text = f"{dialect.dialogue} dialogue, {caps.round_ids} round ids; carries {', '.join(have) or 'none of the rest'}"
    return text + (f"; not {', '.join(caps.lacking())}" if caps.lacking() else "")


def _isolated(name: str, run: Callable[[], CheckResult]) -> CheckResult:
    """``run()``'s result, or, when it raises, a failed check ``name`` naming the exception's type and message."""
    try:
        return run()
    except Exception as exc:
        result = CheckResult(name)
        result.abort(exc)
        return result


def run_check(args: argparse.Namespace) -> int:
    """Run every check of the kit on the dialect, each on its own (one that raises fails alone, naming the
    exception), and print each check's status and case count. Returns 0 when every check passed or was skipped as
    not applying, else 1. Raises DialectError (exit 2) for an unknown dialect, a class missing a part, or bad
    options."""
    options = _options(args.options)
    cls = dialect_class(args.dialect, field="dialect")
    dialect = cls(options)
    checks = [
        _isolated("golden vectors", lambda: _golden(dialect)),
        _isolated("round trip", lambda: check_round_trip(dialect, args.seed, args.frames)),
        _isolated("framer fuzz", lambda: check_fuzz(dialect, args.seed)),
        _isolated("dialogue loopback", lambda: check_dialogue(dialect, args.seed)),
    ]
    if not args.no_certify:
        checks.append(_isolated("short certify (in-process)", lambda: _certify(args.dialect, options)))
    if args.json:
        print(json.dumps([vars(c) | {"passed": c.passed, "status": c.status} for c in checks], indent=2))
    else:
        print(f"dialect {dialect.name} ({cls.__module__}:{cls.__qualname__})")
        print(f"  declares: {_declared(dialect)}")
        for c in checks:
            verdict = f"FAIL ({c.failed})" if c.status == "FAIL" else c.status
            note = f"  [{c.note}]" if c.note else ""
            print(f"  {c.name:<28} {c.cases:>6} cases  {verdict}{note}")
            for why in c.failures:
                print(f"      - {why}")
    ok = all(c.passed for c in checks)
    print(f"conformance: {'PASS' if ok else 'FAIL'}")
    return 0 if ok else 1
