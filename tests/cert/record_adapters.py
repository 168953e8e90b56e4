"""Adapters for the bet record's check (REC-1) on a server that serves no balances: the in-process reference
server, its bet record's balances blanked as a server that does not serve them would leave them.

- :class:`NoBalances` blanks them and declares it (``bet_record_fields`` empty);
- :class:`UndeclaredNoBalances` blanks them but keeps the default declaration (both served);
- :class:`NoBalancesWrongReturned` is :class:`NoBalances` with every settled win credited one unit too much in the
  bet record (the planted defect REC-1 must still find).

:data:`MODULE` is this module's source, for a lab's working folder (``certify`` finds ``module:Class`` there).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from harness.bench.adapters.reference_inprocess import InProcessAdapter
from harness.records import BetRecordRow, BetResult

MODULE = Path(__file__).read_text(encoding="utf-8")


class UndeclaredNoBalances(InProcessAdapter):
    """The reference server in-process, every bet-record row without its balances; declares nothing."""

    def bet_record(self, player_id: str) -> list[BetRecordRow]:
        return [replace(r, balance_before=None, balance_after=None) for r in super().bet_record(player_id)]


class NoBalances(UndeclaredNoBalances):
    """The reference server in-process, serving no balances in its bet record, and saying so."""

    bet_record_fields: frozenset[str] = frozenset()


class NoBalancesWrongReturned(NoBalances):
    """:class:`NoBalances`, each won bet's ``returned`` one more than the server credited."""

    def bet_record(self, player_id: str) -> list[BetRecordRow]:
        rows = super().bet_record(player_id)
        return [replace(r, returned=r.returned + 1) if r.result == BetResult.WIN else r for r in rows]
