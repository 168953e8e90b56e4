"""Generate ``docs/steps.md``, the step vocabulary, from the step definitions themselves (so it cannot drift).

    python -m harness.cert.steps.docgen            # rewrite docs/steps.md (in a checkout; else print the page)
    python -m harness.cert.steps.docgen --check    # exit 1 when docs/steps.md is stale
    python -m harness.cert.steps.docgen --out -    # print the page (from the steps installed here)

In a checkout the page is the repository's ``docs/steps.md``. In an installed package nothing is written without
``--out FILE``: the page goes to standard output, and ``--check`` compares with the shipped copy
(``xocdia-hil docs steps``). The installed package's own folders are never written.

The page has a section per step module (:data:`harness.cert.steps.STEP_MODULES`, one per area), its steps in source
order, after a list of the kinds of step parameters (:mod:`harness.cert.steps.params`). Each step's phrase comes
from its pytest-bdd parser, its meaning from its docstring's first paragraph, its example from the docstring's line
starting ``Example:`` or else from the first step of the shipped features it matches (a scenario outline's steps
with its first example row).
"""

from __future__ import annotations

import argparse
import importlib
import inspect
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pytest_bdd.parser import FeatureParser
from pytest_bdd.steps import StepFunctionContext, step_function_context_registry

from harness.cert.steps import STEP_MODULES
from harness.cert.steps.params import KINDS, Kind
from harness.files import DOCS, FEATURES

_ROOT = Path(__file__).resolve().parents[3]
#: ``docs/steps.md`` of the checkout this module runs from; None in an installed package (whose folders are read-only
#: to this tool: the page then goes to standard output unless ``--out`` names a file).
DOC: Path | None = _ROOT / "docs" / "steps.md" if (_ROOT / "pyproject.toml").is_file() else None
#: The section title of each step module.
TITLES: dict[str, str] = {
    "harness.cert.steps.players": "Players: balances and connections",
    "harness.cert.steps.table": "The table: faces, scripted incidents, what the table did",
    "harness.cert.steps.configuration": "The table configuration: declared choices, the cap and timeouts followed",
    "harness.cert.steps.rounds": "Rounds: opening, closing, pauses, and how the server ends them",
    "harness.cert.steps.bets": "Bets: placing, refusals, retries and reused bet ids",
    "harness.cert.steps.money": "Money: returns, balances and the bet record",
    "harness.cert.steps.oracle": "The oracle",
    "harness.cert.steps.corrections": "Corrections of a settled round",
    "harness.cert.steps.server": "The server: kills, restarts and crash points",
    "harness.cert.steps.access": "Access control: requests under chosen credentials (`features/access.feature`)",
    "harness.cert.steps.reports": "The table's own reports: lost, late or read again",
    "harness.cert.steps.devices": "Device lines: forged, replayed and noisy frames (`features/devices.feature`)",
    "harness.cert.steps.camera": "The result camera: its confidence in each token (`features/camera.feature`)",
    "harness.cert.steps.explore": "Generative certification (`features/exploration.feature`, docs/explore.md)",
    "harness.cert.steps.faults": "Fault injection (`features/faults/`)",
    "harness.cert.steps.stats": "Statistics (`features/rtp.feature`, `features/fairness.feature`)",
    "harness.cert.steps.documents": "Rules documents and how amounts are written (`features/documents.feature`)",
}
_GROUP = re.compile(r"\(\?P<(\w+)>[^)]*\)")


@dataclass(frozen=True, slots=True)
class StepDoc:
    """One step's entry: its module (the area), keyword, phrase (parameters as ``<name>``), meaning, example, and
    the kinds of its typed parameters."""

    module: str
    keyword: str
    phrase: str
    meaning: str
    example: str
    kinds: tuple[tuple[str, Kind[Any]], ...] = ()


def _contexts() -> dict[Callable[..., object], StepFunctionContext]:
    """Step function → its pytest-bdd step context (type, parser, converters)."""
    return {c.step_func: c for c in list(step_function_context_registry.values())}


def _phrase(context: StepFunctionContext) -> str:
    """The step's phrase with parameters as ``<name>``, from its pytest-bdd parser."""
    text = _GROUP.sub(lambda m: f"<{m.group(1)}>", context.parser.name)
    text = re.sub(r"(\w)s\?", r"\1(s)", text)  # regex plural "re-shakes?" reads "re-shake(s)"
    return re.sub(r"\{(\w+)(:[^}]*)?\}", lambda m: f"<{m.group(1)}>", text)


def _kinds(context: StepFunctionContext) -> tuple[tuple[str, Kind[Any]], ...]:
    """The step's parameters typed by a kind of :mod:`harness.cert.steps.params`, in the order of its phrase."""
    kinds = {name: getattr(convert, "kind", None) for name, convert in context.converters.items()}
    order = re.findall(r"<(\w+)>", _phrase(context))
    return tuple((name, kind) for name in order if isinstance(kind := kinds.get(name), Kind))


def feature_steps() -> list[tuple[str, str]]:
    """(keyword, text) of every step of the shipped features in file order; a scenario outline's steps rendered
    with its first example row."""
    out: list[tuple[str, str]] = []
    for path in sorted(FEATURES.rglob("*.feature")):
        feature = FeatureParser(str(FEATURES), str(path.relative_to(FEATURES))).parse()
        for template in feature.scenarios.values():
            contexts = [next(e.as_contexts(), {}) for e in template.examples if e] or [{}]
            out += [(str(step.type).capitalize(), step.name) for step in template.render(contexts[0]).steps]
    return out


def collect() -> list[StepDoc]:
    """Every step of every step module, module by module (:data:`STEP_MODULES`), each in source order.

    Raises:
        ValueError: a step module without a title in :data:`TITLES`, or a step with no example (neither an
            ``Example:`` line in its docstring nor a step of the shipped features it matches).
    """
    modules = {name: importlib.import_module(name) for name in STEP_MODULES}
    contexts = _contexts()
    lines = feature_steps()
    out: list[StepDoc] = []
    for name, module in modules.items():
        if name not in TITLES:
            raise ValueError(f"step module {name} has no section title in docgen.TITLES")
        funcs = [f for _, f in inspect.getmembers(module, inspect.isfunction) if f in contexts]
        funcs.sort(key=lambda f: f.__code__.co_firstlineno)
        for func in funcs:
            context = contexts[func]
            keyword = str(context.type or "given").capitalize()
            doc = inspect.getdoc(func) or ""
            meaning = " ".join(doc.split("\n\n", 1)[0].split())
            example = next((ln.split(":", 1)[1].strip() for ln in doc.splitlines() if ln.startswith("Example:")), "")
            if not example:
                found = (text for kw, text in lines if kw == keyword and context.parser.is_matching(text))
                example = next((f"{keyword} {text}" for text in found), "")
            if not example:
                raise ValueError(f"step {func.__name__} of {name} has no example in its docstring or the features")
            out.append(StepDoc(name, keyword, _phrase(context), meaning, example, _kinds(context)))
    return out


def render(steps: list[StepDoc]) -> str:
    """The page: the introduction, the kinds of step parameters, then a section per step module."""
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
        "## Parameter kinds",
        "",
        "A parameter of one of these kinds must have its form, or the step fails naming the parameter, the text and",
        "the form (the phrase decides which text the step matches; the kind, what the text may be). Parameters",
        "without a kind are numbers the phrase types itself (round, shake and token numbers; seconds) or text taken",
        "as it stands.",
        "",
        "| Kind | Form |",
        "| --- | --- |",
        *(f"| {name} | {form} |" for name, form in dict.fromkeys((k.name, k.form) for k in KINDS)),
        "",
    ]
    for module in STEP_MODULES:
        lines += [f"## {TITLES[module]}", ""]
        for step in (s for s in steps if s.module == module):
            lines += [f"### `{step.keyword} {step.phrase}`", ""]
            lines += [step.meaning, ""] if step.meaning else []
            if step.kinds:
                lines += ["Parameters: " + "; ".join(f"`<{name}>` {kind.name}" for name, kind in step.kinds) + ".", ""]
            lines += ["```gherkin", step.example, "```", ""]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Write, print or check the page (the module's docstring); returns the exit status (1: ``--check`` found the
    page stale, 2: ``--out`` cannot be written)."""
    parser = argparse.ArgumentParser(prog="python -m harness.cert.steps.docgen")
    parser.add_argument("--check", action="store_true", help="exit 1 if the page is not up to date")
    parser.add_argument(
        "--out",
        default=None,
        metavar="FILE|-",
        help="where to write the page ('-': standard output; default docs/steps.md in a checkout, else '-')",
    )
    args = parser.parse_args(argv)
    text = render(collect())
    out = Path(args.out) if args.out not in (None, "-") else DOC if args.out is None else None
    if args.check:
        against = out if out is not None else DOCS / "steps.md"
        current = against.read_text(encoding="utf-8") if against.exists() else ""
        if current != text:
            print(f"{against} is stale: run python -m harness.cert.steps.docgen", file=sys.stderr)
            return 1
        return 0
    if out is None:
        sys.stdout.write(text)
        return 0
    try:
        out.write_text(text, encoding="utf-8")
    except OSError as exc:
        print(f"docgen: error: cannot write {out}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    print(f"wrote {out} ({len(text.splitlines())} lines)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
