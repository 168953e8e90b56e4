"""The independent rules oracle: from the simulator's ground truth and :mod:`harness.paytable` (RULES.md) it
states what every round and bet must come to, and reports each way a server's results, bet records and
balances differ, naming round, bet and clause. It never imports ``gameserver``."""

from harness.oracle.check import Difference, Observation, SentBet, Verdict, judge
from harness.oracle.expect import ExpectedBet, ExpectedRound, expected_bet, expected_rounds

__all__ = [
    "Difference",
    "ExpectedBet",
    "ExpectedRound",
    "Observation",
    "SentBet",
    "Verdict",
    "expected_bet",
    "expected_rounds",
    "judge",
]
