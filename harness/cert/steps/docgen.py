"""Generate ``docs/steps.md``, the step vocabulary, from the step definitions themselves (so it cannot drift).

    python -m harness.cert.steps.docgen            # rewrite docs/steps.md
    python -m harness.cert.steps.docgen --check    # exit 1 when docs/steps.md is stale

Each step's phrase comes from its pytest-bdd parser, its meaning and example from its docstring (the first
paragraph, and the line starting ``Example:``).
"""

from __future__ import annotations

import argparse
import importlib
import inspect
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from pytest_bdd.steps import step_function_context_registry

from harness.cert.steps import given, then, when
from harness.files import FEATURES

DOC = Path(__file__).resolve().parents[3] / "docs" / "steps.md"
MODULES: tuple[tuple[str, ModuleType], ...] = (("Given", given), ("When", when), ("Then", then))
#: Step areas written by other parts of the harness: documented with an example taken from the feature files.
OTHER_AREAS: tuple[tuple[str, str], ...] = (
    ("Statistics (`features/rtp.feature`, `features/fairness.feature`)", "harness.cert.steps.stats"),
    ("Fault injection (`features/faults/`)", "harness.cert.steps.faults"),
    ("Rules documents (`features/documents.feature`)", "harness.cert.steps.documents"),
    ("Device lines: forged, replayed and noisy frames (`features/devices.feature`)", "harness.cert.steps.devices"),
    (
        "Bets, money and records (`features/limits.feature`, `idempotency`, `corrections`, `refunds`, `records`, "
        "`atomicity`)",
        "harness.cert.steps.money",
    ),
    ("Generative certification (`features/exploration.feature`, docs/explore.md)", "harness.cert.steps.explore"),
    (
        "Deadlines: late and lost reports, the time a pause gives back (`features/errors.feature`, "
        "`features/special_handling.feature`, `features/corrections.feature`, `features/rounds.feature`)",
        "harness.cert.steps.timing",
    ),
)
_GROUP = re.compile(r"\(\?P<(\w+)>[^)]*\)")


@dataclass(frozen=True, slots=True)
class StepDoc:
    keyword: str
    phrase: str
    meaning: str
    example: str


def _contexts() -> dict[Any, Any]:
    """Step function → its pytest-bdd step context (type, parser)."""
    return {c.step_func: c for c in list(step_function_context_registry.values())}


def _phrases() -> dict[Any, str]:
    """Step function → its phrase with parameters as ``<name>``, from pytest-bdd's registry of step contexts."""
    out: dict[Any, str] = {}
    for context in list(step_function_context_registry.values()):
        text = getattr(context.parser, "name", None)
        if isinstance(text, str):
            text = _GROUP.sub(lambda m: f"<{m.group(1)}>", text)
            text = re.sub(r"(\w)s\?", r"\1(s)", text)  # regex plural "re-shakes?" reads "re-shake(s)"
            out[context.step_func] = re.sub(r"\{(\w+)(:[^}]*)?\}", lambda m: f"<{m.group(1)}>", text)
    return out


def collect() -> list[StepDoc]:
    """Every step of the given/when/then modules, in source order.

    Raises:
        ValueError: a step without an ``Example:`` line in its docstring (the page would be incomplete).
    """
    out: list[StepDoc] = []
    phrases = _phrases()
    for keyword, module in MODULES:
        funcs = [f for _, f in inspect.getmembers(module, inspect.isfunction) if f.__module__ == module.__name__]
        funcs.sort(key=lambda f: f.__code__.co_firstlineno)
        for func in funcs:
            phrase = phrases.get(func)
            if phrase is None:
                continue
            doc = inspect.getdoc(func) or ""
            meaning = " ".join(doc.split("\n\n", 1)[0].split())
            example = next((ln.split(":", 1)[1].strip() for ln in doc.splitlines() if ln.startswith("Example:")), "")
            if not example:
                raise ValueError(f"step {func.__name__} ({phrase!r}) has no 'Example:' line in its docstring")
            out.append(StepDoc(keyword, phrase, meaning, example))
    return out


def collect_other() -> list[tuple[str, list[StepDoc]]]:
    """The other step areas: phrase, docstring (if any) and the first line of ``features/`` that uses it."""
    lines = [
        ln.strip()
        for path in sorted(FEATURES.rglob("*.feature"))
        for ln in path.read_text(encoding="utf-8").splitlines()
        if ln.strip().split(" ", 1)[0] in ("Given", "When", "Then", "And", "But")
    ]
    modules: list[tuple[str, ModuleType]] = []
    for title, module_name in OTHER_AREAS:
        try:
            modules.append((title, importlib.import_module(module_name)))
        except ImportError:
            continue
    contexts, phrases = _contexts(), _phrases()
    out: list[tuple[str, list[StepDoc]]] = []
    for title, module in modules:
        funcs = [f for _, f in inspect.getmembers(module, inspect.isfunction) if f in contexts]
        funcs.sort(key=lambda f: f.__code__.co_firstlineno)
        docs = []
        for func in funcs:
            context = contexts[func]
            keyword = str(context.type or "given").capitalize()
            example = next((ln for ln in lines if context.parser.is_matching(ln.split(" ", 1)[1])), "")
            if example and not example.startswith(keyword):
                example = f"{keyword} {example.split(' ', 1)[1]}"
            meaning = " ".join((inspect.getdoc(func) or "").split("\n\n", 1)[0].split())
            docs.append(StepDoc(keyword, phrases[func], meaning, example))
        out.append((title, docs))
    return out


def render(steps: list[StepDoc], other: list[tuple[str, list[StepDoc]]] | None = None) -> str:
    lines = [
        "# Step vocabulary",
        "",
        "<!-- generated by `python -m harness.cert.steps.docgen` from the step definitions: do not edit -->",
        "",
        "Every phrase a certification scenario may use. A new scenario written only with these phrases runs without",
        "any new Python: a lab keeps it in its own folder (the `features/` of the workspace `xocdia-hil init` makes)",
        "and runs it with `xocdia-hil certify --bench BENCH --features shipped --features features` (beside the",
        "shipped suite) or `--features features` (alone).",
        "",
        "Conventions: `<player>` is a player name (letters, digits, `_`); amounts are whole **minor units**",
        "(`1000` or `1,000`); `<bet>` is one of `four_red`, `three_red`, `two_red`, `one_red`, `four_white`,",
        "`four_of_a_kind`, `odd`, `even`, `big`, `small`; faces are four of `r`/`w`, token 0 first (`r r w w`);",
        "rounds are numbered 1, 2, ... in the order the scenario opens them; seconds are bench seconds (virtual",
        "time in-process, wall time on a real-time bench). Tag each scenario with the clause it certifies",
        "(`@clause:SH-3`) and, where it applies, the GLI clause (`@gli:4.16`); `@severity:minor` etc. is optional;",
        "`@bench:in-process` runs a scenario only on the named bench(es) (elsewhere it is not applicable, with why).",
        "Given steps come before the first round opens; `And`/`But` continue the previous keyword.",
        "",
        "What counts: every Then step is a check of one clause, and the judge checks every round and bet of the",
        "scenario at its end, whatever its Then steps asked; a clause is covered only where such a check ran, and a",
        "failure names the clause whose check failed ([judge.md](judge.md)). `certify` refuses, before running",
        "anything, a scenario with no `Then` or no `@clause` tag, a line that is no step (a mistyped keyword such as",
        "`Gvien`) and a step outside a scenario; write notes as `#` comments, not as description text.",
        "",
        "A complete scenario (in a `.feature` file that starts with a `Feature: <title>` line):",
        "",
        "```gherkin",
        "@clause:SH-3",
        "Scenario: A standing token is shaken again",
        "  Given player alice has a balance of 10,000",
        "  And in round 1 token 2 is left standing after shake 1",
        "  And in round 1 shake 2 lands r r w w",
        "  When round 1 opens",
        "  And alice bets 1,000 on two_red",
        "  And the round is played to the end",
        "  Then the server asks for 1 re-shake in round 1",
        "  And alice's bet on two_red returns 2,500",
        "  And the oracle finds no difference",
        "```",
        "",
    ]
    for keyword, _module in MODULES:
        lines += [f"## {keyword}", ""]
        for step in (s for s in steps if s.keyword == keyword):
            lines += [
                f"### `{step.keyword} {step.phrase}`",
                "",
                step.meaning,
                "",
                "```gherkin",
                step.example,
                "```",
                "",
            ]
    for title, docs in other or []:
        lines += [
            f"## {title}",
            "",
            "Steps of another part of the harness; examples are lines of the shipped features.",
            "",
        ]
        for doc in docs:
            lines += [f"### `{doc.keyword} {doc.phrase}`", ""]
            lines += [doc.meaning, ""] if doc.meaning else []
            lines += ["```gherkin", doc.example, "```", ""] if doc.example else []
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m harness.cert.steps.docgen")
    parser.add_argument("--check", action="store_true", help="exit 1 if docs/steps.md is not up to date")
    parser.add_argument("--out", type=Path, default=DOC)
    args = parser.parse_args(argv)
    text = render(collect(), collect_other())
    if args.check:
        current = args.out.read_text(encoding="utf-8") if args.out.exists() else ""
        if current != text:
            print(f"{args.out} is stale: run python -m harness.cert.steps.docgen", file=sys.stderr)
            return 1
        return 0
    args.out.write_text(text, encoding="utf-8")
    print(f"wrote {args.out} ({len(text.splitlines())} lines)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
