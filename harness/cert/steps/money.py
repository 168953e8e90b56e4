"""Steps for bets, money and records (RULES.md LIM-*, IDEM-*, COR-1, REF-1, REC-1, ATOM-1): retries with the same
client bet id, a server kill and restart in the middle of a scenario, a supervisor's correction, and checks of the
bet record row by row. Only the adapter interface is used (``harness.bench.adapters.base``), so every step runs on
every bench; a step that needs what a bench cannot do (a restart of a server the harness did not start, a
correction on an adapter without one) ends the scenario as not applicable.

Amounts are minor units; faces are four of r/w, token 0 first. Registered by the xocdia pytest plugin
(``STEP_MODULES``).
"""

from __future__ import annotations

import time
from typing import Any

from pytest_bdd import parsers, then, when

from harness.bench.adapters.base import CrashPoints
from harness.cert.steps.context import (
    BET_NAMES,
    CertContext,
    amount,
    bet_name,
    expect_refused_correction,
    faces,
    not_applicable,
)
from harness.errors import AdapterError
from harness.judge.checks import ClauseFailure
from harness.records import BetRecordRow, BetReply, BetResult, RoundStatus
from harness.wire.realtime import SelectEnvironment

#: Wall seconds the bench runs between two requests while it waits to kill a server the moment a round ends.
POLL_S = 0.001
#: What the harness notes in the rig's actions when it kills the server (:func:`_restart`): a retry or a reused bet
#: id sent after it is judged under IDEM-2 (the same holds across a restart), not IDEM-1.
#: The certified table configuration (RULES.md, "Bets, money and records"), in minor units: the chip unit and the
#: table minimum and maximum stake. A bench states no limits of its own (``harness/bench/config.py``), so a refused
#: stake is judged against these (LIM-2, LIM-3).
CHIP_UNIT = 100
MIN_STAKE = 100
MAX_STAKE = 1_000_000
#: The harness's notes of a bet leaving (:meth:`Rig.bet`, :func:`send_again`, :func:`send_id_again`).
_SENT = ("bet", "retry", "reused bet id")


def _original(cert: CertContext, player: str) -> BetReply:
    """The player's latest bet the server confirmed (the one a retry repeats)."""
    for reply in reversed(cert.replies):
        if reply.player_id == player and reply.accepted:
            return reply
    raise AssertionError(f"{player} has no confirmed bet in this scenario to send again")


def _restartable(cert: CertContext) -> Any:
    """The bench's adapter when it can kill and restart its server; else the scenario is not applicable."""
    adapter: Any = cert.running().adapter
    if not getattr(adapter, "can_restart", False) or not hasattr(adapter, "kill_server"):
        not_applicable(f"the {cert.bench.name} bench cannot kill and restart its server")
    return adapter


def _restart(cert: CertContext, adapter: Any) -> None:
    """Kill the server (as kill -9), restart it on its ledger and connect every player again."""
    rig = cert.running()
    rig.kill_server(adapter.kill_server)  # noted with the rounds in play, for the judge
    adapter.restart_server()
    rig.note("harness", "restarted the server")
    for player in cert.players:
        adapter.connect(player)


@when(parsers.re(r"(?P<player>\w+) sends that bet again"))
def send_again(cert: CertContext, player: str) -> None:
    """The player sends its latest confirmed bet again, with the same client bet id and the same content (a retry
    after a lost reply, IDEM-1). A Then step checks the answer.

    Example: When alice sends that bet again
    """
    rig = cert.running()
    first = _original(cert, player)
    rig.note(player, "retry", f"{first.client_bet_id} {first.bet_type} {first.stake}")
    cert.replies.append(rig.send(player, first.client_bet_id, first.bet_type, first.stake))


@when(parsers.re(r"(?P<player>\w+) sends that bet id again with (?P<money>[\d,]+) on (?P<bet>\w+)"))
def send_id_again(cert: CertContext, player: str, money: str, bet: str) -> None:
    """The player sends a bet with the client bet id of its latest confirmed bet but another content (IDEM-1).

    Example: When alice sends that bet id again with 2,000 on big
    """
    rig = cert.running()
    first = _original(cert, player)
    rig.note(player, "reused bet id", f"{first.client_bet_id} {bet} {money}")
    cert.replies.append(rig.send(player, first.client_bet_id, bet_name(bet), amount(money)))


@when(
    parsers.re(r"(?P<player>\w+) bets (?P<money>[\d,]+) on (?P<bet>\w+) with the client bet id of (?P<other>\w+)'s bet")
)
def bet_with_anothers_id(cert: CertContext, player: str, money: str, bet: str, other: str) -> None:
    """The player sends a bet whose client bet id is the one another player's latest confirmed bet carried (client
    bet ids are the client's own: two players' may be equal). It is a new bet of this player, never the other's
    retry (IDEM-1): a Then step and the judge check that it got a confirmation of its own.

    Example: When bob bets 1,000 on big with the client bet id of alice's bet
    """
    rig = cert.running()
    first = _original(cert, other)
    rig.note(player, "bet", f"{bet} {money} with {other}'s client bet id {first.client_bet_id}")
    cert.replies.append(rig.send(player, first.client_bet_id, bet_name(bet), amount(money)))


@when("the server is killed and restarted")
def killed_and_restarted(cert: CertContext) -> None:
    """The game server is killed as a kill -9 would (only what it committed survives), restarted on its ledger, and
    every player connects again (IDEM-2). Not applicable on a bench that cannot restart its server.

    Example: When the server is killed and restarted
    """
    _restart(cert, _restartable(cert))


@when(parsers.parse("the server is killed as soon as it reports round {n:d} ended, and restarted"))
def killed_at_end(cert: CertContext, n: int) -> None:
    """Run until the server reports round n settled, void or cancelled, then at once kill it as a kill -9 would,
    restart it on its ledger and connect every player again (ATOM-1: a kill while the settlement is written). Not
    applicable on a bench that cannot restart its server.

    Example: When the server is killed as soon as it reports round 1 ended, and restarted
    """
    adapter = _restartable(cert)
    rig = cert.running()
    rid = cert.round_id(n)
    if rig.bench.realtime:  # a server process writes on its own clock: ask it as often as a request allows
        deadline = time.monotonic() + rig.bench.timing.step_timeout_s
        env = rig.env
        while rig.server_end(rid) is None and time.monotonic() < deadline:
            # at least POLL_S, and up to the wall clock: each request takes wall time, and a bench that ran
            # POLL_S per request fell behind the server's clock (the table shook too late for the server's close)
            until = env.now + POLL_S
            if isinstance(env, SelectEnvironment):
                until = max(until, env.wall_to_sim(env.clock()))
            env.run(until=until)
    rig.run_until(lambda: rig.server_end(rid) is not None, f"the server to end round {n}")
    _restart(cert, adapter)


@when(
    parsers.re(
        r"the server dies after (?P<k>\d+) statements? of the write that ends round (?P<n>\d+), and is restarted"
    ),
    converters={"k": int, "n": int},
)
def dies_in_write(cert: CertContext, k: int, n: int) -> None:
    """Run until the server writes the end of round n (settled, void or cancelled) to its ledger, and kill it, as a
    kill -9 would, just before statement k + 1 of that write (counting ``BEGIN``, each ``INSERT``/``UPDATE`` and
    ``COMMIT``: a crash point, docs/adapters.md); a write of k statements or fewer completes and the server is
    killed right after it. Then restart it on its ledger and connect every player again. Whatever the restart finds,
    the round must be settled or refunded as a whole (ATOM-1). Not applicable on a bench whose adapter has no
    crash points.

    Example: When the server dies after 3 statements of the write that ends round 1, and is restarted
    """
    adapter: Any = _restartable(cert)
    if not isinstance(cert.running().adapter, CrashPoints):
        not_applicable(f"the {cert.bench.name} bench's server adapter has no crash points inside its ledger writes")
    rig = cert.running()
    rid = cert.round_id(n)
    if rig.server_end(rid) is not None:
        raise AssertionError(f"round {n} has ended already: a crash point goes before the write that ends it")
    try:
        adapter.arm_crash(rid, k)
    except AdapterError as exc:
        if exc.code == "not_supported":
            not_applicable(str(exc))
        raise
    rig.note("harness", "crash point", f"die after {k} statements of the write that ends round {rid}")

    def written() -> bool:
        try:
            return not adapter.server_up or rig.server_end(rid) is not None
        except AdapterError as exc:  # it died between the two questions
            if exc.code == "unreachable":
                return True
            raise

    rig.run_until(written, f"the server to write the end of round {n}")
    if adapter.server_up:  # the write had k statements or fewer: it completed; kill it right after
        rig.kill_server(adapter.kill_server, write=f"the end of round {rid} (complete)")
    else:  # it died at the crash point (kill_server of a dead server only takes note, for the restart)
        rig.kill_server(adapter.kill_server, write=f"the end of round {rid}, after {k} statements")
    adapter.restart_server()
    rig.note("harness", "restarted the server")
    for player in cert.players:
        adapter.connect(player)


@when(parsers.parse("the supervisor corrects round {n:d} to {result}"))
def supervisor_corrects(cert: CertContext, n: int, result: str) -> None:
    """The supervisor corrects the outcome the server settled round n on (a misread, manual mode: COR-1). Not
    applicable on an adapter without corrections; fails when the server refuses.

    Example: When the supervisor corrects round 1 to r r w w
    """
    rig = cert.running()
    rid = cert.round_id(n)
    rig.note("supervisor", "correct", f"round {rid} to {faces(result)}")
    refusal = ""
    try:
        rig.adapter.correct(rid, faces(result))
    except AdapterError as exc:
        if exc.code == "not_supported":
            not_applicable(str(exc))
        refusal = f"{exc.code} {exc}"
    if not refusal:
        rig.corrected(rid, faces(result))
    what = f"round {n}: expected the correction to {faces(result)} accepted, the server "
    what += f"refused it: {refusal}" if refusal else "accepted it"
    cert.check("COR-1", not refusal, what, rid)


def check_refused_correction(cert: CertContext, n: int, sent: str) -> None:
    """The supervisor asks the server to correct round ``n`` to ``sent`` and the server must refuse: a check of
    COR-1 on round ``n``, recorded either way. Ends the scenario as not applicable on an adapter without corrections.

    Raises:
        ClauseFailure: the server accepted the correction.
    """
    rid = cert.round_id(n)  # a round the scenario never opened is the scenario's mistake, not the server's
    accepted = ""
    try:
        expect_refused_correction(cert, n, sent)
    except ClauseFailure:
        raise
    except AssertionError as exc:  # the server accepted it
        accepted = str(exc)
    what = f"round {n}: expected the correction to {sent!r} refused; " + (accepted or "the server refused it")
    cert.check("COR-1", not accepted, what, rid)


@then(parsers.parse("the server refuses the supervisor's correction of round {n:d} to {result}"))
def correction_of_faces_refused(cert: CertContext, n: int, result: str) -> None:
    """The supervisor asks the server to correct round n to these faces (four of r/w) and the server refuses,
    whatever its code (COR-1): round n is not the last settled round (an earlier round, or one still in play), the
    faces are those round n was already settled on, or the correction would take a balance below zero. Later steps
    check that nothing changed. Not applicable on an adapter without corrections.

    Example: Then the server refuses the supervisor's correction of round 1 to r r r w
    """
    check_refused_correction(cert, n, faces(result))


@then(parsers.re(r"(?P<player>\w+)'s retry gets the original confirmation"))
def retry_confirmed(cert: CertContext, player: str) -> None:
    """The player's latest reply is the confirmation of the first bet sent with that client bet id: accepted, same
    bet id, round and balances before and after (IDEM-1, IDEM-2).

    The check decides IDEM-2 when the harness killed and restarted the server during the scenario (a retry after
    the restart: the rig's actions hold the kill), else IDEM-1.

    Example: Then alice's retry gets the original confirmation
    """
    retry = cert.last_reply(player)
    first = next(r for r in cert.replies if r.player_id == player and r.client_bet_id == retry.client_bet_id)
    assert retry is not first, f"{player} has not sent a bet again"
    got = (retry.accepted, retry.bet_id, retry.round_id, retry.balance_before, retry.balance_after)
    want = (True, first.bet_id, first.round_id, first.balance_before, first.balance_after)
    clause = "IDEM-2" if _restarted(cert) else "IDEM-1"
    what = f"{player}'s retry got (accepted, bet, round, before, after) {got}, expected the original {want}"
    if retry.code:
        what += f" (server code {retry.code})"
    cert.check(clause, got == want, what, first.round_id)


def _restarted(cert: CertContext) -> bool:
    """True when the harness killed the server during the scenario (:func:`_restart` notes it)."""
    return bool(cert.running().kills)


@then(parsers.re(r"(?P<player>\w+)'s bet is refused"))
def refused(cert: CertContext, player: str) -> None:
    """The server refused the player's latest bet, whatever its code (a lab's server has its own codes).

    The clause the refusal decides comes from what the harness knows of the bet, never from the server's code, in
    this order: the client bet id of a bet the server confirmed before, sent with another content (IDEM-1; IDEM-2
    after a server restart); a bet type that is none of the game's ten (BET-1); a stake off the chip unit (LIM-2);
    a stake below the table minimum or above the table maximum (LIM-3; RULES.md's certified configuration, 100 to
    1,000,000 in chips of 100: a bench states no limits of its own); a stake above the player's balance on the
    server (LIM-1; the step follows the refused bet, and a refusal changes nothing); otherwise a bet the round did
    not take: while the supervisor had it paused (ERR-1), after a resume once the betting time given back was over
    (ERR-2), or after betting closed or for a round not taking bets (GP-3, GLI-19 C.6.4).

    Example: Then alice's bet is refused
    """
    reply = cert.last_reply(player)
    clause, why = _refusal_clause(cert, reply)
    what = f"{player}'s bet of {reply.stake} on {reply.bet_type} ({why}): expected refused, the server "
    what += f"refused it ({reply.code or 'no code'})" if not reply.accepted else f"accepted it (bet {reply.bet_id})"
    cert.check(clause, not reply.accepted, what, reply.round_id or cert.running().current_round())


def _refusal_clause(cert: CertContext, reply: BetReply) -> tuple[str, str]:
    """The clause a refusal of ``reply``'s bet decides, and why (see :func:`refused`)."""
    for earlier in cert.replies:
        if earlier is reply:
            break
        same_id = (earlier.player_id, earlier.client_bet_id) == (reply.player_id, reply.client_bet_id)
        if same_id and earlier.accepted:
            clause = "IDEM-2" if _restarted(cert) else "IDEM-1"
            return clause, f"the client bet id {reply.client_bet_id} of confirmed bet {earlier.bet_id}, other content"
    stake = reply.stake
    if reply.bet_type not in BET_NAMES:
        return "BET-1", "a bet type the game does not have"
    if stake % CHIP_UNIT:
        return "LIM-2", f"not a whole number of chips of {CHIP_UNIT}"
    if not MIN_STAKE <= stake <= MAX_STAKE:
        return "LIM-3", f"outside the table limits {MIN_STAKE} to {MAX_STAKE}"
    balance = cert.running().adapter.balance(reply.player_id)
    if stake > balance:
        return "LIM-1", f"above the balance of {balance}"
    supervisor = _supervisor_before_bet(cert, reply.player_id)
    if supervisor == "pause":
        return "ERR-1", "sent while the supervisor had the round paused"
    if supervisor == "resume":
        return "ERR-2", "sent after the resumed round's betting time was over"
    return "GP-3", "sent when the round was not taking bets"


def _supervisor_before_bet(cert: CertContext, player: str) -> str:
    """The supervisor's last action (open, pause, resume, cancel) before the player's latest bet left; "" if none."""
    actions = cert.running().actions
    sent = max((i for i, a in enumerate(actions) if a.who == player and a.what in _SENT), default=len(actions))
    for action in reversed(actions[:sent]):
        if action.who == "supervisor" and action.what in ("open", "pause", "resume", "cancel"):
            return action.what
    return ""


def _round_rows(cert: CertContext, rid: str) -> dict[str, list[BetRecordRow]]:
    adapter = cert.running().adapter
    return {p: [r for r in adapter.bet_record(p) if r.round_id == rid] for p in cert.players}


@then(parsers.parse("every bet of every player in round {n:d} is refunded exactly once"))
def refunded_once(cert: CertContext, n: int) -> None:
    """Every bet the server confirmed in round n appears once in its player's bet record, refunded in full
    (result refund, stake returned), the record holds no other bet of that round, and every player's balance is
    back at its opening balance (REF-1; for scenarios where round n is the players' only round).

    Example: Then every bet of every player in round 1 is refunded exactly once
    """
    rid = cert.round_id(n)
    confirmed = {r.bet_id: r for r in cert.replies if r.accepted and r.round_id == rid}
    assert len({r.player_id for r in confirmed.values()}) >= 2, "the scenario needs bets of two players or more"
    rows = _round_rows(cert, rid)
    for reply in confirmed.values():
        mine = [r for r in rows[reply.player_id] if r.bet_id == reply.bet_id]
        what = f"round {n}: bet {reply.bet_id} of {reply.player_id} is {len(mine)} times in the record, expected once"
        cert.check("REF-1", len(mine) == 1, what, rid)
        got = (mine[0].result, mine[0].returned)
        what = f"round {n}: bet {reply.bet_id} of {reply.player_id} is {got}, expected refund of {reply.stake}"
        cert.check("REF-1", got == (BetResult.REFUND, reply.stake), what, rid)
    extra = [r for rs in rows.values() for r in rs if r.bet_id not in confirmed]
    cert.check("REF-1", not extra, f"round {n}: bets in the record that were never confirmed: {extra}", rid)
    adapter = cert.running().adapter
    balances = {p: adapter.balance(p) for p in cert.players}
    what = f"round {n}: balances {balances}, expected the opening balances {cert.players}"
    cert.check("REF-1", balances == cert.players, what, rid)


@then(
    parsers.re(
        r"(?P<player>\w+)'s bet on (?P<bet>\w+) reads: round (?P<n>\d+), stake (?P<stake>[\d,]+), "
        r"(?P<result>win|lose|push|refund|pending), returned (?P<returned>[\d,]+), (?P<status>\w+), "
        r"outcome (?P<outcome>[rw ]{7}|none), reds (?P<reds>[0-4]|none), "
        r"balance (?P<before>[\d,]+) before and (?P<after>[\d,]+) after"
    )
)
def record_row(
    cert: CertContext,
    player: str,
    bet: str,
    n: str,
    stake: str,
    result: str,
    returned: str,
    status: str,
    outcome: str,
    reds: str,
    before: str,
    after: str,
) -> None:
    """Every column of the player's latest bet of this type in the bet record (REC-1): its round, stake, result,
    amount returned, the round's status (settled, void, cancelled, in_progress), the outcome and its number of reds
    (``none`` unless the round was settled), and the balance just before the stake and just after the bet's own
    credit.

    Example: Then alice's bet on big reads: round 1, stake 1,000, push, returned 1,000, settled, outcome r r w w, reds 2, balance 10,000 before and 9,200 after
    """  # noqa: E501 - the example is one Gherkin line
    row = cert.record_for(player, bet_name(bet))
    got = {
        "round": row.round_id,
        "stake": row.wagered,
        "result": str(row.result),
        "returned": row.returned,
        "status": str(row.round_status),
        "outcome": row.outcome,
        "reds": row.reds,
        "balance before": row.balance_before,
        "balance after": row.balance_after,
    }
    want = {
        "round": cert.round_id(int(n)),
        "stake": amount(stake),
        "result": result,
        "returned": amount(returned),
        "status": str(RoundStatus(status)),
        "outcome": "" if outcome == "none" else faces(outcome),
        "reds": None if reds == "none" else int(reds),
        "balance before": amount(before),
        "balance after": amount(after),
    }
    wrong = {k: f"{got[k]!r} (expected {want[k]!r})" for k in want if got[k] != want[k]}
    what = f"{player}'s {bet} bet in the bet record: " + (f"{wrong}" if wrong else "every column as expected")
    cert.check("REC-1", not wrong, what, row.round_id)


@then(parsers.parse("round {n:d} is settled or refunded as a whole and every bet record agrees with its balance"))
def whole_round(cert: CertContext, n: int) -> None:
    """After a kill during the settlement of round n (ATOM-1): the server reports the round ended once; either every
    bet of it is settled (win, lose or push) or every bet is refunded, none is left pending; and for every player,
    opening balance − every stake + every amount returned in the bet record = the balance.

    Example: Then round 1 is settled or refunded as a whole and every bet record agrees with its balance
    """
    rig = cert.running()
    rid = cert.round_id(n)
    confirmed = {r.bet_id for r in cert.replies if r.accepted and r.round_id == rid}
    assert confirmed, f"round {n} holds no confirmed bet: the scenario proves nothing"
    ends = [e for e in rig.adapter.round_events() if e.round_id == rid and e.ends_round]
    cert.check("ATOM-1", len(ends) == 1, f"round {n}: the server reported {len(ends)} ends, expected 1: {ends}", rid)
    rows = [r for rs in _round_rows(cert, rid).values() for r in rs]
    missing = sorted(confirmed - {r.bet_id for r in rows})
    what = f"round {n}: confirmed bets missing from the bet record after the restart: {missing}"
    cert.check("ATOM-1", not missing, what, rid)
    results = {str(r.result) for r in rows}
    decided = {str(BetResult.WIN), str(BetResult.LOSE), str(BetResult.PUSH)}
    whole = results <= decided or results == {str(BetResult.REFUND)}
    what = f"round {n}: bet results {sorted(results)}, expected all settled (win, lose, push) or all refund"
    cert.check("ATOM-1", whole, what, rid)
    for player, opening in cert.players.items():
        record = rig.adapter.bet_record(player)
        want = opening + sum(r.returned - r.wagered for r in record)
        got = rig.adapter.balance(player)
        cert.check("ATOM-1", got == want, f"{player}: balance {got}, but the bet record accounts for {want}", rid)
