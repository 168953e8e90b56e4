"""Then steps: what the server must have done, read through its adapter, and the oracle's verdict.

Amounts are minor units. Results are win, lose, push (Big/Small on two reds), refund (void/cancel) or pending.
"""

from __future__ import annotations

from pytest_bdd import parsers, then

from harness.cert.steps.context import CertContext, amount, bet_name, faces, format_money
from harness.cert.steps.money import MAX_STAKE
from harness.judge.oracle import BALANCE_CLAUSE, reshake_clauses
from harness.records import BetResult, RoundEventKind
from harness.wire.protocol.messages import Frame
from simulator.events import BowlPlaced, Event, ShakeEnded, ShakeStarted, TokensPlaced

#: The clause a refusal with this error code decides: the refusals the shipped steps name by code.
REFUSAL_CLAUSES = {
    "betting_closed": "GP-3",  # a bet after the betting period has ended (GLI-19 C.6.4)
    "round_paused": "ERR-1",  # no bet while the round is paused
    "insufficient_balance": "LIM-1",
    "stake_not_chip_multiple": "LIM-2",
    "stake_below_minimum": "LIM-3",
    "stake_above_maximum": "LIM-3",
    "unknown_bet_type": "BET-1",
}
#: The device reports a played round carries, each with the clause it shows was kept: four tokens on the plate
#: (EQ-1, GP-1), the bowl on and a whole shake (GP-2), the bowl off and a read of the four faces (EQ-2, EQ-3).
TABLE_REPORTS = (
    ("CONSOLE TOKENS", "GP-1"),
    ("CONSOLE TOKENS", "EQ-1"),
    ("BOWL ON", "GP-2"),
    ("SHAKER START", "GP-2"),
    ("SHAKER END", "GP-2"),
    ("BOWL OFF", "GP-3"),
    ("READER RESULT", "EQ-2"),
)


def _end(cert: CertContext, n: int) -> tuple[RoundEventKind, str, str]:
    rid = cert.round_id(n)
    end = cert.running().server_end(rid)
    if end is None:
        raise AssertionError(f"the server has not ended round {n} (id {rid})")
    return end.kind, end.clause, end.faces


@then(parsers.parse("the server settles round {n:d} on {result}"))
def settles_on(cert: CertContext, n: int, result: str) -> None:
    """The server settled round n on exactly these faces.

    Example: Then the server settles round 1 on r r w w
    """
    kind, clause, got = _end(cert, n)
    want = faces(result)
    rid = cert.round_id(n)
    what = f"round {n}: expected settled on {want}, server {kind} {clause}{got}"
    cert.check("GP-3", kind == RoundEventKind.SETTLED, what, rid)
    cert.check("EQ-3", got == want, what, rid)


@then(parsers.parse("the server voids round {n:d} under {clause}"))
def voids_under(cert: CertContext, n: int, clause: str) -> None:
    """The server voided round n, naming this clause (SH-4a, SH-4b, SH-5).

    Example: Then the server voids round 1 under SH-5
    """
    kind, got, _ = _end(cert, n)
    what = f"round {n}: expected void under {clause}, server {kind} {got}"
    cert.check(clause, (kind, got) == (RoundEventKind.VOID, clause), what, cert.round_id(n))


@then(parsers.parse("the server cancels round {n:d} and refunds every bet"))
def cancels_refunds(cert: CertContext, n: int) -> None:
    """The server cancelled round n (ERR-3) and every bet in it is refunded in full.

    Example: Then the server cancels round 1 and refunds every bet
    """
    kind, clause, _ = _end(cert, n)
    what = f"round {n}: expected cancelled, server {kind} {clause}"
    cert.check("ERR-3", kind == RoundEventKind.CANCELLED, what, cert.round_id(n))
    _all_refunded(cert, n)


@then(parsers.parse("the server ends round {n:d} without playing it and refunds every bet"))
def ends_refunds(cert: CertContext, n: int) -> None:
    """The server ended round n as void or cancelled (it never started at the table) and refunded every bet.

    Example: Then the server ends round 1 without playing it and refunds every bet
    """
    kind, clause, _ = _end(cert, n)
    refunding = (RoundEventKind.VOID, RoundEventKind.CANCELLED)
    what = f"round {n}: expected void or cancelled, server {kind} {clause}"
    cert.check("NET-1", kind in refunding, what, cert.round_id(n))
    _all_refunded(cert, n)


def _all_refunded(cert: CertContext, n: int) -> None:
    rid = cert.round_id(n)
    rig = cert.running()
    rows = [r for p in cert.players for r in rig.adapter.bet_record(p) if r.round_id == rid]
    bad = [r for r in rows if (r.result, r.returned) != (BetResult.REFUND, r.wagered)]
    cert.check("REF-1", not bad, f"round {n}: bets not refunded in full: {bad}", rid)


@then(parsers.re(r"the server asks for (?P<k>\d+) re-shakes? in round (?P<n>\d+)"))
def reshakes(cert: CertContext, k: str, n: str) -> None:
    """The server asked for exactly k re-shakes (SH-2, SH-3) in round n.

    Example: Then the server asks for 2 re-shakes in round 1
    """
    rid = cert.round_id(int(n))
    rig = cert.running()
    got = [e for e in rig.adapter.round_events() if e.round_id == rid and e.kind == RoundEventKind.RESHAKE]
    clauses = reshake_clauses(rig.truth, rig.driver.rounds.get(rid, 0)) or ["SH-2"]
    what = f"round {n}: expected {k} re-shakes, server asked for {len(got)}: {got}"
    for clause in clauses:
        cert.check(clause, len(got) == int(k), what, rid)


@then(parsers.re(r"(?P<player>\w+)'s bet on (?P<bet>\w+) returns (?P<money>[\d,]+)"))
def bet_returns(cert: CertContext, player: str, bet: str, money: str) -> None:
    """The player's latest bet of this type was credited exactly this much (stake included; 0 for a loss).

    Example: Then alice's bet on big returns 1,960
    """
    row = cert.record_for(player, bet_name(bet))
    what = f"{player}'s {bet} bet returned {row.returned}, expected {money}"
    cert.check(cert.bet_clause(row), row.returned == amount(money), what, row.round_id)
    if row.bet_type in ("four_red", "four_white") and row.wagered == MAX_STAKE and row.returned:
        cert.check("LIM-4", row.returned == amount(money), what, row.round_id)  # the largest payout, in full


@then(parsers.re(r"(?P<player>\w+)'s bet on (?P<bet>\w+) is (?P<result>win|lose|push|refund|pending)"))
def bet_result(cert: CertContext, player: str, bet: str, result: str) -> None:
    """The player's latest bet of this type has this result in the bet record.

    Example: Then alice's bet on big is refund
    """
    row = cert.record_for(player, bet_name(bet))
    what = f"{player}'s {bet} bet is {row.result}, expected {result}"
    cert.check(cert.bet_clause(row), row.result == result, what, row.round_id)


@then(parsers.re(r"(?P<player>\w+)'s balance is (?P<money>[\d,]+)"))
def balance_is(cert: CertContext, player: str, money: str) -> None:
    """The player's balance on the server is exactly this (minor units).

    Example: Then alice's balance is 10,960
    """
    got = cert.running().adapter.balance(player)
    cert.check(BALANCE_CLAUSE, got == amount(money), f"{player}'s balance is {got}, expected {money}")


@then(parsers.re(r"(?P<player>\w+)'s bet is rejected with (?P<code>\w+)"))
def rejected_with(cert: CertContext, player: str, code: str) -> None:
    """The server refused the player's last bet with this error code (e.g. betting_closed, insufficient_balance).

    Example: Then alice's bet is rejected with betting_closed
    """
    reply = cert.last_reply(player)
    clause = REFUSAL_CLAUSES.get(code, "GP-3")
    what = f"{player}'s last bet was accepted (bet {reply.bet_id}); expected {code}"
    cert.check(clause, not reply.accepted, what, reply.round_id)
    what = f"{player}'s last bet was rejected with {reply.code}, expected {code}"
    cert.check(clause, reply.code == code, what, reply.round_id)


@then(parsers.re(r"(?P<player>\w+)'s bet record shows (?P<k>\d+) bets?"))
def record_count(cert: CertContext, player: str, k: str) -> None:
    """The player's bet record holds exactly k bets (DC-3, GLI 2.8.2).

    Example: Then alice's bet record shows 2 bets
    """
    rows = cert.running().adapter.bet_record(player)
    cert.check("DC-3", len(rows) == int(k), f"{player}'s bet record shows {len(rows)} bets, expected {k}: {rows}")


@then(parsers.re(r"(?P<player>\w+)'s bet record agrees with (?P<pronoun>his|her|their) balance"))
def record_agrees(cert: CertContext, player: str, pronoun: str) -> None:
    """Opening balance − every stake in the player's bet record + every amount returned = current balance.

    Example: Then bob's bet record agrees with his balance
    """
    rig = cert.running()
    rows = rig.adapter.bet_record(player)
    want = cert.players[player] + sum(r.returned - r.wagered for r in rows)
    got = rig.adapter.balance(player)
    cert.check(BALANCE_CLAUSE, got == want, f"{player}: balance {got}, but the bet record accounts for {want}")


@then("the oracle finds no difference")
def oracle_clean(cert: CertContext) -> None:
    """The independent oracle agrees with every round result, bet record and balance the server reported.

    Example: Then the oracle finds no difference
    """
    verdict = cert.verdict()
    if not verdict.passed:
        raise verdict.failure()


@then("no balance is negative")
def no_negative(cert: CertContext) -> None:
    """No player's balance is below zero (GLI 4.3.3 b).

    Example: Then no balance is negative
    """
    rig = cert.running()
    low = {p: rig.adapter.balance(p) for p in cert.players}
    assert low, "the scenario has no players whose balance could be checked"
    cert.check("GLI 4.3.3b", all(v >= 0 for v in low.values()), f"negative balance: {low}")


@then(parsers.parse("the table placed four tokens, covered them and shook before revealing round {n:d}"))
def table_sequence(cert: CertContext, n: int) -> None:
    """Ground truth and the devices agree that round n went: four tokens on the plate (EQ-1, GP-1), bowl on and a
    full shake (GP-2), and only then the reveal; the console, bowl and shaker lines carried each of those reports.

    Example: Then the table placed four tokens, covered them and shook before revealing round 1
    """
    rig = cert.running()
    sim = rig.driver.rounds[cert.round_id(n)]
    order: list[type[Event]] = [TokensPlaced, BowlPlaced, ShakeStarted, ShakeEnded]
    seen = [type(e) for e in rig.truth if type(e) in order and getattr(e, "round", None) == sim]
    rid = cert.round_id(n)
    cert.check("GP-2", seen[:4] == order, f"round {n}: the table did {[c.kind for c in seen]}", rid)
    decoders = {line.trace_name: line.dialect.codec().decoder() for line in rig.bench.lines}
    sent = {
        f"{item.src.value} {item.message.TYPE}"
        for r in rig.recorder.records
        if r.dir == "tx" and r.port in decoders
        for item in decoders[r.port].feed(r.data)
        if isinstance(item, Frame)
    }  # each line's frames decoded in its own dialect
    for report, clause in TABLE_REPORTS:
        cert.check(clause, report in sent, f"round {n}: {report} frame on the device lines", rid)


@then(parsers.re(r"(?P<minor>\d+) minor units are shown as (?P<text>[\d,.\-]+)"))
def shown_as(cert: CertContext, minor: str, text: str) -> None:
    """Amounts in reports are written in US format with two decimals, 100 minor units to the unit (DOC-2).

    Example: Then 123400 minor units are shown as 1,234.00
    """
    shown = format_money(int(minor))
    cert.checks.require("DOC-2", shown == text, f"{minor} is shown as {shown}, expected {text}")
