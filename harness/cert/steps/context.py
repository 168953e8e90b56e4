"""What the certification steps of one scenario share: the bench, the players and scripted incidents the Given
steps declare, and the rig the first When step builds from them.

Amounts in steps are integer minor units (``1000`` or ``1,000``: commas are thousands separators only); the kinds of
step parameters are :mod:`harness.cert.steps.params`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, NoReturn

from harness.bench import forge
from harness.bench.config import Bench
from harness.bench.rig import Rig
from harness.errors import AdapterError
from harness.judge.checks import CheckLog, ClauseFailure
from harness.judge.expect import expected_bet
from harness.judge.oracle import Finding, Verdict, failure_of
from harness.records import BetRecordRow, BetReply
from harness.wire.dialects.base import capability_names
from harness.wire.messages import Message, Source

#: How a scenario's skip reason starts when the bench cannot run it; the clause matrix lists it as not applicable.
NOT_APPLICABLE = "not applicable on this bench: "


def not_applicable(reason: str) -> NoReturn:
    """End the scenario as not applicable to this bench (what it needs, the bench cannot do: a server kill on a
    server the harness did not start, unplugging a line it does not own, faults on a bench that forbids them).
    It is neither passed nor failed: the clause matrix lists it with ``reason``, and ``certify`` names the clauses
    the bench could not exercise. Raises pytest's skip exception."""
    import pytest  # here, not at the top: ``xocdia-hil run`` uses this module's formatting without the certify extra

    pytest.skip(NOT_APPLICABLE + reason)


def declares(bench: Bench, capability: str, role: Source | None = None) -> bool:
    """Whether the bench's dialect declares ``capability`` (a yes/no field of
    :class:`~harness.wire.dialects.base.ProtocolCapabilities`) on the line that carries device ``role``, or on every
    line when ``role`` is None (a line of a companion dialect answers for the companion's declaration).

    Raises:
        ValueError: ``capability`` is not one of the yes/no capabilities (the message lists them).
    """
    names = capability_names()
    if capability not in names:
        raise ValueError(f"capability: must be one of {', '.join(names)}; got {capability!r}")
    lines = [line for line in bench.lines if role is None or role in line.roles]
    return all(line.dialect.capabilities.as_dict()[capability] for line in lines)


def needs(cert: CertContext, capability: str, why: str, role: Source | None = None) -> None:
    """A step's guard: end the scenario as not applicable (:func:`not_applicable`) when the bench's dialect does not
    declare ``capability`` on the line of device ``role`` (every line when None); the reason names the dialect, the
    capability and ``why`` the step needs it. Returns when it is declared.

    Raises:
        ValueError: ``capability`` is not one of the yes/no capabilities (the message lists them).
    """
    if declares(cert.bench, capability, role):
        return
    lines = [line for line in cert.bench.lines if role is None or role in line.roles]
    lacking = sorted({line.dialect.name for line in lines if not line.dialect.capabilities.as_dict()[capability]})
    where = f"the {role.value} line" if role is not None else "its lines"
    not_applicable(
        f"bench {cert.bench.name} speaks {', '.join(lacking)} on {where}, which declares no {capability}: {why}"
    )


BET_NAMES = (
    "four_red",
    "three_red",
    "two_red",
    "one_red",
    "four_white",
    "four_of_a_kind",
    "odd",
    "even",
    "big",
    "small",
)


def format_money(minor: int, unit: int = 100) -> str:
    """Minor units shown in US format (DOC-2): ``123400`` → ``"1,234.00"`` with 100 minor units per unit."""
    sign = "-" if minor < 0 else ""
    whole, cents = divmod(abs(minor), unit)
    width = len(str(unit - 1))
    return f"{sign}{whole:,}.{cents:0{width}d}"


def before_start(cert: CertContext, what: str) -> None:
    """A Given step's guard: the step ``what`` scripts the table, so it must come before the first round opens.

    Raises:
        AssertionError: the table is already running.
    """
    if cert.rig is not None:
        raise AssertionError(f"'{what}' must come before the first round opens (the table is already running)")


@dataclass
class CertContext:
    """One scenario's state. ``rig`` exists from the first step that needs the table running."""

    bench: Bench
    players: dict[str, int] = field(default_factory=dict)
    script: list[dict[str, Any]] = field(default_factory=list)
    rig: Rig | None = None
    replies: list[BetReply] = field(default_factory=list)
    checks: CheckLog = field(default_factory=CheckLog)
    tried: bool = False  # a step asked for the rig (the server had to be reached)

    def running(self) -> Rig:
        """The rig, built (server started, players connected) on first use. Raises on a bench that cannot start."""
        if self.rig is None:
            self.tried = True
            self.rig = Rig.build(self.bench, self.players, self.script)
            for player in self.players:
                self.rig.adapter.connect(player)
        return self.rig

    def round_id(self, ordinal: int) -> str:
        rig = self.running()
        if ordinal > len(rig.opened):
            raise AssertionError(f"round {ordinal} was never opened (this scenario opened {len(rig.opened)})")
        return rig.opened[ordinal - 1]

    def last_reply(self, player: str) -> BetReply:
        for reply in reversed(self.replies):
            if reply.player_id == player:
                return reply
        raise AssertionError(f"{player} has not sent a bet in this scenario")

    def record_for(self, player: str, bet: str) -> BetRecordRow:
        """The player's most recent bet of type ``bet`` in their bet record."""
        rows = [r for r in self.running().adapter.bet_record(player) if r.bet_type == bet]
        if not rows:
            raise AssertionError(f"{player}'s bet record has no bet on {bet}")
        return rows[-1]

    def verdict(self) -> Verdict:
        """The judge's verdict on everything the server reported so far; its checks join the scenario's."""
        verdict = self.running().verdict()
        self.checks.extend(verdict.checks)
        return verdict

    def bet_clause(self, row: BetRecordRow) -> str:
        """The clause that decides this bet by the judge: its paytable row (PAY-1..PAY-10) in a settled round,
        the clause that voided or cancelled its round, DC-2 while its round is still in play."""
        expected = self.verdict().expected.get(row.round_id)
        try:
            return expected_bet(expected, row.bet_type, row.wagered).clause
        except ValueError:
            return "BET-1"  # a bet type or stake the rules do not know

    def check(self, clause: str, ok: bool, what: str, round_id: str = "") -> None:
        """A step's check of ``clause`` on ``what`` (about the server's round ``round_id``, when one).

        When it fails and the judge finds a root cause (for that round first, else any), the failure names the
        judge's root clause, with the step's finding and the root's consequences under it: a wrong balance caused
        by a wrong payout fails the payout's clause, not the balance's. Otherwise it names ``clause``.

        Raises:
            ClauseFailure: the check failed.
        """
        if ok:
            self.checks.record(clause, what, True)
            return
        roots: tuple[Finding, ...] = ()
        if self.rig is not None:
            try:
                roots = self.verdict().roots
            except AdapterError:  # the judge cannot read the server: the step's own clause decides
                roots = ()
        if roots:
            raise failure_of(roots, what, round_id)
        self.checks.record(clause, what, False)
        raise ClauseFailure(clause, what)

    def evidence(self, verdict: Verdict | None = None) -> dict[str, str]:
        """Everything to attach to the scenario's report (trace, timeline, server events, the judge's
        ``verdict``, computed here when not given)."""
        rig = self.rig
        if rig is None:
            return {}
        out = {
            "serial trace (all ports, both directions)": "\n".join(r.readable() for r in rig.recorder.records),
            "ground truth timeline (jsonl)": "\n".join(json.dumps(e.to_dict()) for e in rig.truth),
            "harness actions": "\n".join(f"{a.t:10.4f}  {a.who:<12} {a.what} {a.detail}" for a in rig.actions),
        }
        try:
            events = rig.adapter.round_events()
            out["server round events (jsonl)"] = "\n".join(json.dumps(dict(e.raw or {})) for e in events)
            out["oracle verdict"] = (verdict or rig.verdict()).summary()
        except Exception as exc:  # evidence must never hide the scenario's own result
            out["oracle verdict"] = f"could not be computed: {exc}"
        out.update(rig.adapter.evidence())
        return out


def expect_refused_correction(cert: CertContext, n: int, sent: str) -> None:
    """The supervisor asks the server to correct round ``n`` to ``sent`` (sent as it is, unchecked); returns when
    the server refuses, whatever its code. Ends the scenario as not applicable on an adapter without corrections.

    Raises:
        AssertionError: the server accepted the correction.
    """
    rig = cert.running()
    rid = cert.round_id(n)
    rig.note("supervisor", "correct", f"round {rid} to {sent!r}")
    try:
        rig.adapter.correct(rid, sent)
    except AdapterError as exc:
        if exc.code == "not_supported":
            not_applicable(str(exc))
        return
    raise AssertionError(f"the server accepted the correction of round {n} to {sent!r}")


def lose_reports(rig: Rig, source: Source, kind: type[Message]) -> None:
    """From now on in the round the rig opened last, ``source``'s ``kind`` reports never reach the server
    (:func:`harness.bench.forge.miss`). Ends the scenario as not applicable on a bench that cannot drop them."""
    try:
        forge.miss(rig, source, kind)
    except forge.CannotForge as exc:
        not_applicable(str(exc))
