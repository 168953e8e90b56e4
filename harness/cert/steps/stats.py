"""pytest-bdd steps for ``features/rtp.feature`` and ``features/fairness.feature``.

Registered by the xocdia pytest plugin (``STEP_MODULES``). Outcome files are real CSV files in ``tmp_path``,
generated with the package's seeded numpy generator and audited through :func:`harness.stats.audit.audit_file`; plots
are attached to the allure report when allure is active.

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

from harness.cert.steps.params import BET_TYPE, PERCENT, PROBABILITY, Percent, typed
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
    """Every token shows red with probability 1/2.

    Example: Given fair tokens
    """
    stats_context.p_red = Fraction(1, 2)


@given(parsers.parse("tokens that show red with probability {p}"), converters=typed(p=PROBABILITY))
def biased_tokens(stats_context: StatsContext, p: Fraction) -> None:
    """Every token shows red with probability ``p`` (a fraction or a decimal).

    Example: Given tokens that show red with probability 0.505
    """
    stats_context.p_red = p


@when("the exact mathematics is computed")
def compute(stats_context: StatsContext) -> None:
    """The exact figures of every bet type (return, return per decided bet, variance) are computed for these
    tokens, as fractions.

    Example: When the exact mathematics is computed
    """
    stats_context.figures = {m.bet: m for m in all_bets(stats_context.p_red)}


@when(parsers.parse("{rounds:d} rounds are simulated with seed {seed:d}"))
def run_simulation(stats_context: StatsContext, rounds: int, seed: int) -> None:
    """This many rounds with these tokens are simulated from the seed and every bet type is settled in every
    round.

    Example: When 10000000 rounds are simulated with seed 7
    """
    p = stats_context.p_red
    stats_context.simulation = simulate(rounds, seed, p_red=None if p == Fraction(1, 2) else [float(p)] * 4)


@then(parsers.parse("the highest RTP is {percent} % on big and small"), converters=typed(percent=PERCENT))
def highest_rtp(stats_context: StatsContext, clause_checks: CheckLog, percent: Percent) -> None:
    """The highest exact return of any bet is exactly this percentage, and only big and small reach it (RTP-1).

    Example: Then the highest RTP is 98.75 % on big and small
    """
    best, bets = max_rtp(stats_context.p_red)
    clause_checks.require("RTP-1", best == percent.value, f"highest RTP {float(best):.4%}, expected {percent} %")
    names = sorted(b.value for b in bets)
    clause_checks.require(
        "RTP-1", set(bets) == {BetType.BIG, BetType.SMALL}, f"highest RTP on {names}, expected big, small"
    )


def _figure(stats_context: StatsContext, bet: BetType) -> BetMath:
    m = stats_context.figures.get(bet)
    assert m is not None, "the exact mathematics has not been computed in this scenario"
    return m


def _shown(rtp: Fraction) -> str:
    return f"{float(rtp):.4%}"


@then(parsers.parse("{bet} returns {percent} % per decided bet"), converters=typed(bet=BET_TYPE, percent=PERCENT))
def rtp_decided(stats_context: StatsContext, clause_checks: CheckLog, bet: BetType, percent: Percent) -> None:
    """The bet's exact return per decided bet (its pushes left out) is exactly this percentage (its paytable
    row).

    Example: Then big returns 98.0 % per decided bet
    """
    m = _figure(stats_context, bet)
    what = f"{bet} returns {_shown(m.rtp_decided)} per decided bet, expected {percent} %"
    clause_checks.require(m.clause, m.rtp_decided == percent.value, what)


@then(
    parsers.re(r"(?P<bet>\w+) returns more than (?P<percent>[\d.]+) %"), converters=typed(bet=BET_TYPE, percent=PERCENT)
)
def rtp_above(stats_context: StatsContext, clause_checks: CheckLog, bet: BetType, percent: Percent) -> None:
    """The bet's exact return is above this percentage (its paytable row).

    Example: Then big returns more than 100 %
    """
    m = _figure(stats_context, bet)
    clause_checks.require(m.clause, m.rtp > percent.value, f"{bet} returns {_shown(m.rtp)}, expected > {percent} %")


@then(
    parsers.re(r"(?P<bet>\w+) returns less than (?P<percent>[\d.]+) %"), converters=typed(bet=BET_TYPE, percent=PERCENT)
)
def rtp_below(stats_context: StatsContext, clause_checks: CheckLog, bet: BetType, percent: Percent) -> None:
    """The bet's exact return is below this percentage (its paytable row).

    Example: Then small returns less than 98.75 %
    """
    m = _figure(stats_context, bet)
    clause_checks.require(m.clause, m.rtp < percent.value, f"{bet} returns {_shown(m.rtp)}, expected < {percent} %")


@then(parsers.re(r"(?P<bet>\w+) returns (?P<percent>[\d.]+) %"), converters=typed(bet=BET_TYPE, percent=PERCENT))
def rtp_equals(stats_context: StatsContext, clause_checks: CheckLog, bet: BetType, percent: Percent) -> None:
    """The bet's exact return is exactly this percentage (its paytable row); with fair tokens, for a bet whose
    return is the game's highest, also a check of RTP-1.

    Example: Then four_red returns 93.75 %
    """
    m = _figure(stats_context, bet)
    what = f"{bet} returns {_shown(m.rtp)}, expected {percent} %"
    clause_checks.require(m.clause, m.rtp == percent.value, what)
    best, bets = max_rtp(stats_context.p_red)
    if stats_context.p_red == Fraction(1, 2) and m.bet in bets:  # with fair tokens: the game's maximum (RTP-1)
        clause_checks.record("RTP-1", f"{what}: the game's maximum return, {_shown(best)}", True)


@then(parsers.parse("every bet's measured RTP is within {limit:g} standard errors of its exact RTP"))
def simulation_agrees(stats_context: StatsContext, clause_checks: CheckLog, limit: float) -> None:
    """Every bet type's return measured in the simulation is within ``limit`` standard errors of its exact
    return (its paytable row).

    Example: Then every bet's measured RTP is within 4.5 standard errors of its exact RTP
    """
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
    """An outcome file (CSV) of this many settled rounds, each token showing red with probability ``p``, drawn
    from the seed.

    Example: Given an outcome file of 12000 rounds from tokens that show red with probability 0.5, seed 5
    """
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
    """Every nth round of the outcome file is void instead (no faces, no number of reds).

    Example: Given every 25th round of the file is void
    """
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
    """The shipped table profile of this name, with every token showing red with probability ``p``.

    Example: Given the standard table profile with tokens that show red with probability 0.5
    """
    profile = load_profile(name)
    stats_context.profile = replace(profile, tokens=replace(profile.tokens, p_red=(p, p, p, p)))


@given(parsers.parse("the simulated table plays {rounds:d} rounds with seed {seed:d}, writing its event log"))
def simulated_table(stats_context: StatsContext, tmp_path: Path, rounds: int, seed: int) -> None:
    """The simulated table of that profile plays this many rounds from the seed (no players); its event log is
    the file to audit.

    Example: Given the simulated table plays 12000 rounds with seed 3, writing its event log
    """
    assert stats_context.profile is not None, "no table profile chosen"
    log = Table(stats_context.profile, seed, players=0).run(rounds)
    path = tmp_path / "events.jsonl"
    with path.open("w", encoding="utf-8") as fh:
        log.write_jsonl(fh)
    stats_context.outcome_file = path


@when("the outcome file is audited with plots")
def audit_outcomes(stats_context: StatsContext, tmp_path: Path) -> None:
    """The file is audited (the fairness tests and the bias monitor); its plots are written and attached to the
    report.

    Example: When the outcome file is audited with plots
    """
    assert stats_context.outcome_file is not None
    stats_context.audit = result = audit_file(stats_context.outcome_file, tmp_path / "plots")
    _attach(result.plots)


def _audit(ctx: StatsContext) -> AuditResult:
    assert ctx.audit is not None, "no audit has run in this scenario"
    return ctx.audit


@then("every fairness test passes at 99 % after Holm's correction")
def fairness_passes(stats_context: StatsContext, clause_checks: CheckLog) -> None:
    """No fairness test rejects the outcomes at 99 % after Holm's correction, and at least 5 of the tests could
    be applied (EQ-3).

    Example: Then every fairness test passes at 99 % after Holm's correction
    """
    report = _audit(stats_context).fairness
    rejected = [f"{t.name} (p = {t.p_value:.3g})" for t in report.tests if t.rejected]
    assert report.alpha == 0.01, f"the audit judged at alpha {report.alpha}, not 0.01"  # the harness's own setting
    clause_checks.require("EQ-3", not rejected, f"fairness tests rejected at 99 % after Holm's correction: {rejected}")
    applicable = sum(t.applicable for t in report.tests)
    what = f"{applicable} fairness tests could be applied to the outcomes, expected at least 5"
    clause_checks.require("EQ-3", applicable >= 5, what)


@then("the bias monitor raises no alarm")
def no_alarm(stats_context: StatsContext, clause_checks: CheckLog) -> None:
    """The bias monitor raised no alarm on the outcomes (EQ-3).

    Example: Then the bias monitor raises no alarm
    """
    raised = _audit(stats_context).alarm
    clause_checks.require("EQ-3", raised is None, f"expected no alarm, the bias monitor raised {raised}")


@then(parsers.parse("the bias monitor raises an alarm before round {limit:d}, with the tokens favouring {colour}"))
def alarm(stats_context: StatsContext, clause_checks: CheckLog, limit: int, colour: str) -> None:
    """The bias monitor raised an alarm by round ``limit``, finding the tokens favour this colour (EQ-3).

    Example: Then the bias monitor raises an alarm before round 10000, with the tokens favouring red
    """
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
    """The audit as a whole fails (EQ-3).

    Example: Then the audit fails
    """
    result = _audit(stats_context)
    what = f"expected the audit to fail, it passed (alarm {result.alarm}, fairness passed {result.fairness.passed})"
    clause_checks.require("EQ-3", not result.passed, what)


@then("the audit plots are written")
def plots_written(stats_context: StatsContext) -> None:
    """The audit wrote its three plots (RTP convergence, outcome histogram, bias monitor) as PNG files.

    Example: Then the audit plots are written
    """
    plots = _audit(stats_context).plots
    assert {p.name for p in plots} == {"rtp_convergence.png", "outcome_histogram.png", "monitor.png"}
    assert all(p.read_bytes()[:4] == b"\x89PNG" for p in plots)


@then(parsers.parse("{voided:d} rounds are counted as void or cancelled and {settled:d} as settled"))
def counted_apart(stats_context: StatsContext, clause_checks: CheckLog, voided: int, settled: int) -> None:
    """The audit counted this many rounds as void or cancelled and this many as settled (only settled rounds
    have an outcome, EQ-3).

    Example: Then 480 rounds are counted as void or cancelled and 11520 as settled
    """
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
