"""The independent rules oracle: from the simulator's ground truth and :mod:`harness.judge.paytable` (RULES.md) it
states what every round and bet must come to, and reports each way a server's results, bet records and
balances differ, naming round, bet and clause. It never imports ``gameserver``."""

from harness.judge.expect import ExpectedBet, ExpectedRound, expected_bet, expected_rounds
from harness.judge.findings import Difference, Finding
from harness.judge.oracle import Observation, SentBet, Verdict, judge

__all__ = [
    "Difference",
    "ExpectedBet",
    "ExpectedRound",
    "Finding",
    "Observation",
    "SentBet",
    "Verdict",
    "expected_bet",
    "expected_rounds",
    "judge",
]
