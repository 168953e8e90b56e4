"""pytest-bdd steps for ``features/rtp.feature`` and ``features/fairness.feature``.

Imported into ``tests/bdd/conftest.py`` (``from harness.cert.steps.stats import *``). Outcome files are real CSV
files in ``tmp_path``, generated with the package's seeded numpy generator and audited through
:func:`harness.stats.audit.audit_file`; plots are attached to the allure report when allure is active.

Every Then step records its checks in the scenario's ``clause_checks`` log, each naming the clause it decides: a bet's
return its paytable row (PAY-1..PAY-10), the game's maximum return RTP-1, the fairness of the table's outcomes EQ-3.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass, field, replace
from fractions import Fraction
from pathlib import Path

import pytest
from pytest_bdd import given, parsers, then, when

from harness.files import load_profile
from harness.judge.checks import CheckLog
from harness.stats.audit import AuditResult, audit_file
from harness.stats.exact import BetMath, all_bets, bet_math, max_rtp
from harness.stats.readers import OUTCOME_COLUMNS
from harness.stats.settlement import SimulationResult, draw_patterns, make_generator, simulate
from simulator import Profile, Table
from simulator.bets import BetType


@dataclass
class StatsContext:
    """What the steps of one scenario share."""

    p_red: Fraction = Fraction(1, 2)
    figures: dict[BetType, BetMath] = field(default_factory=dict)
    simulation: SimulationResult | None = None
    outcome_file: Path | None = None
    profile: Profile | None = None
    audit: AuditResult | None = None


@pytest.fixture
def stats_context() -> StatsContext:
    return StatsContext()


@given("fair tokens")
def fair_tokens(stats_context: StatsContext) -> None:
    stats_context.p_red = Fraction(1, 2)


@given(parsers.parse("tokens that show red with probability {p}"))
def biased_tokens(stats_context: StatsContext, p: str) -> None:
    stats_context.p_red = Fraction(p)


@when("the exact mathematics is computed")
def compute(stats_context: StatsContext) -> None:
    stats_context.figures = {m.bet: m for m in all_bets(stats_context.p_red)}


@when(parsers.parse("{rounds:d} rounds are simulated with seed {seed:d}"))
def run_simulation(stats_context: StatsContext, rounds: int, seed: int) -> None:
    p = stats_context.p_red
    stats_context.simulation = simulate(rounds, seed, p_red=None if p == Fraction(1, 2) else [float(p)] * 4)


def _percent(text: str) -> Fraction:
    return Fraction(text) / 100


@then(parsers.parse("the highest RTP is {percent} % on big and small"))
def highest_rtp(stats_context: StatsContext, clause_checks: CheckLog, percent: str) -> None:
    best, bets = max_rtp(stats_context.p_red)
    clause_checks.require("RTP-1", best == _percent(percent), f"highest RTP {float(best):.4%}, expected {percent} %")
    names = sorted(b.value for b in bets)
    clause_checks.require(
        "RTP-1", set(bets) == {BetType.BIG, BetType.SMALL}, f"highest RTP on {names}, expected big, small"
    )


def _figure(stats_context: StatsContext, bet: str) -> BetMath:
    m = stats_context.figures.get(BetType(bet))
    assert m is not None, "the exact mathematics has not been computed in this scenario"
    return m


def _shown(rtp: Fraction) -> str:
    return f"{float(rtp):.4%}"


@then(parsers.parse("{bet} returns {percent} % per decided bet"))
def rtp_decided(stats_context: StatsContext, clause_checks: CheckLog, bet: str, percent: str) -> None:
    m = _figure(stats_context, bet)
    what = f"{bet} returns {_shown(m.rtp_decided)} per decided bet, expected {percent} %"
    clause_checks.require(m.clause, m.rtp_decided == _percent(percent), what)


@then(parsers.re(r"(?P<bet>\w+) returns more than (?P<percent>[\d.]+) %"))
def rtp_above(stats_context: StatsContext, clause_checks: CheckLog, bet: str, percent: str) -> None:
    m = _figure(stats_context, bet)
    clause_checks.require(m.clause, m.rtp > _percent(percent), f"{bet} returns {_shown(m.rtp)}, expected > {percent} %")


@then(parsers.re(r"(?P<bet>\w+) returns less than (?P<percent>[\d.]+) %"))
def rtp_below(stats_context: StatsContext, clause_checks: CheckLog, bet: str, percent: str) -> None:
    m = _figure(stats_context, bet)
    clause_checks.require(m.clause, m.rtp < _percent(percent), f"{bet} returns {_shown(m.rtp)}, expected < {percent} %")


@then(parsers.re(r"(?P<bet>\w+) returns (?P<percent>[\d.]+) %"))
def rtp_equals(stats_context: StatsContext, clause_checks: CheckLog, bet: str, percent: str) -> None:
    m = _figure(stats_context, bet)
    what = f"{bet} returns {_shown(m.rtp)}, expected {percent} %"
    clause_checks.require(m.clause, m.rtp == _percent(percent), what)
    best, bets = max_rtp(stats_context.p_red)
    if stats_context.p_red == Fraction(1, 2) and m.bet in bets:  # with fair tokens: the game's maximum (RTP-1)
        clause_checks.record("RTP-1", f"{what}: the game's maximum return, {_shown(best)}", True)


@then(parsers.parse("every bet's measured RTP is within {limit:g} standard errors of its exact RTP"))
def simulation_agrees(stats_context: StatsContext, clause_checks: CheckLog, limit: float) -> None:
    sim = stats_context.simulation
    assert sim is not None, "no simulation has run in this scenario"
    for bet, tot in sim.totals.items():
        m = bet_math(bet, stats_context.p_red)
        z = tot.z_against(m.rtp, m.sigma)
        what = (
            f"{bet}: measured {float(tot.rtp):.5%}, exact {float(m.rtp):.5%}, z = {z:+.2f} (expected |z| < {limit:g})"
        )
        clause_checks.require(m.clause, abs(z) < limit, what)


@given(
    parsers.parse(
        "an outcome file of {rounds:d} rounds from tokens that show red with probability {p:g}, seed {seed:d}"
    )
)
def outcome_file(stats_context: StatsContext, tmp_path: Path, rounds: int, p: float, seed: int) -> None:
    patterns = draw_patterns(make_generator(seed), rounds, [p] * 4)
    path = tmp_path / "OUTCOMES.csv"
    with path.open("w", newline="", encoding="utf-8") as fh:
        out = csv.writer(fh)
        out.writerow(OUTCOME_COLUMNS)
        for i, pattern in enumerate(patterns.tolist()):
            faces = "".join("R" if pattern >> j & 1 else "W" for j in range(4))
            out.writerow([f"r{i + 1}", "settled", faces, faces.count("R"), 0, float(i)])
    stats_context.outcome_file = path


@given(parsers.parse("every {nth:d}th round of the file is void"))
def void_every_nth(stats_context: StatsContext, nth: int) -> None:
    path = stats_context.outcome_file
    assert path is not None
    with path.open(newline="", encoding="utf-8") as fh:
        rows = list(csv.reader(fh))
    for i, row in enumerate(rows[1:], start=1):
        if i % nth == 0:
            row[1:4] = ["void", "", ""]
    with path.open("w", newline="", encoding="utf-8") as fh:
        csv.writer(fh).writerows(rows)


@given(parsers.parse("the {name} table profile with tokens that show red with probability {p:g}"))
def table_profile(stats_context: StatsContext, name: str, p: float) -> None:
    profile = load_profile(name)
    stats_context.profile = replace(profile, tokens=replace(profile.tokens, p_red=(p, p, p, p)))


@given(parsers.parse("the simulated table plays {rounds:d} rounds with seed {seed:d}, writing its event log"))
def simulated_table(stats_context: StatsContext, tmp_path: Path, rounds: int, seed: int) -> None:
    assert stats_context.profile is not None, "no table profile chosen"
    log = Table(stats_context.profile, seed, players=0).run(rounds)
    path = tmp_path / "events.jsonl"
    with path.open("w", encoding="utf-8") as fh:
        log.write_jsonl(fh)
    stats_context.outcome_file = path


@when("the outcome file is audited with plots")
def audit_outcomes(stats_context: StatsContext, tmp_path: Path) -> None:
    assert stats_context.outcome_file is not None
    stats_context.audit = result = audit_file(stats_context.outcome_file, tmp_path / "plots")
    _attach(result.plots)


def _audit(ctx: StatsContext) -> AuditResult:
    assert ctx.audit is not None, "no audit has run in this scenario"
    return ctx.audit


@then("every fairness test passes at 99 % after Holm's correction")
def fairness_passes(stats_context: StatsContext, clause_checks: CheckLog) -> None:
    report = _audit(stats_context).fairness
    rejected = [f"{t.name} (p = {t.p_value:.3g})" for t in report.tests if t.rejected]
    assert report.alpha == 0.01, f"the audit judged at alpha {report.alpha}, not 0.01"  # the harness's own setting
    clause_checks.require("EQ-3", not rejected, f"fairness tests rejected at 99 % after Holm's correction: {rejected}")
    applicable = sum(t.applicable for t in report.tests)
    what = f"{applicable} fairness tests could be applied to the outcomes, expected at least 5"
    clause_checks.require("EQ-3", applicable >= 5, what)


@then("the bias monitor raises no alarm")
def no_alarm(stats_context: StatsContext, clause_checks: CheckLog) -> None:
    raised = _audit(stats_context).alarm
    clause_checks.require("EQ-3", raised is None, f"expected no alarm, the bias monitor raised {raised}")


@then(parsers.parse("the bias monitor raises an alarm before round {limit:d}, with the tokens favouring {colour}"))
def alarm(stats_context: StatsContext, clause_checks: CheckLog, limit: int, colour: str) -> None:
    raised = _audit(stats_context).alarm
    clause_checks.require(
        "EQ-3", raised is not None, f"expected an alarm before round {limit}, the monitor raised none"
    )
    assert raised is not None
    what = f"expected an alarm before round {limit} favouring {colour}, got one at {raised.round} favouring "
    what += raised.direction
    clause_checks.require("EQ-3", raised.round <= limit and raised.direction == colour, what)


@then("the audit fails")
def audit_fails(stats_context: StatsContext, clause_checks: CheckLog) -> None:
    result = _audit(stats_context)
    what = f"expected the audit to fail, it passed (alarm {result.alarm}, fairness passed {result.fairness.passed})"
    clause_checks.require("EQ-3", not result.passed, what)


@then("the audit plots are written")
def plots_written(stats_context: StatsContext) -> None:
    plots = _audit(stats_context).plots
    assert {p.name for p in plots} == {"rtp_convergence.png", "outcome_histogram.png", "monitor.png"}
    assert all(p.read_bytes()[:4] == b"\x89PNG" for p in plots)


@then(parsers.parse("{voided:d} rounds are counted as void or cancelled and {settled:d} as settled"))
def counted_apart(stats_context: StatsContext, clause_checks: CheckLog, voided: int, settled: int) -> None:
    report = _audit(stats_context).fairness
    what = f"the audit counted {report.voided} void or cancelled and {report.settled} settled rounds"
    what += f", expected {voided} and {settled} (only settled rounds have an outcome, EQ-3)"
    clause_checks.require("EQ-3", (report.voided, report.settled) == (voided, settled), what)


def _attach(plots: tuple[Path, ...]) -> None:
    """Attach PNGs to the allure report; a no-op when allure-pytest is not recording."""
    try:
        import allure
    except ImportError:  # pragma: no cover - allure-pytest is a test dependency
        return
    for plot in plots:
        allure.attach.file(  # type: ignore[no-untyped-call]
            str(plot), name=plot.stem, attachment_type=allure.attachment_type.PNG
        )
