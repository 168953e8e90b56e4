@gli:2.8.2 @gli:4.14
Feature: The bet record (REC-1)
  Every row of a player's bet record states the bet's own facts: round, stake, result, amount returned, the round's
  status, the outcome and its number of reds, and the balance just before the stake and just after the bet's own
  credit (bets of one round are credited in the order they were placed).

  @clause:REC-1 @clause:DC-3
  Scenario: Each column of the bet record, while the round is open and once it is settled
    Given player alice has a balance of 10,000
    And round 1 lands r r r w
    When round 1 opens
    And alice bets 1,000 on big
    Then alice's bet on big reads: round 1, stake 1,000, pending, returned 0, in_progress, outcome none, reds none, balance 10,000 before and 9,000 after
    When alice bets 500 on odd
    And alice bets 300 on two_red
    And the round is played to the end
    Then alice's bet on big reads: round 1, stake 1,000, win, returned 1,960, settled, outcome r r r w, reds 3, balance 10,000 before and 10,160 after
    And alice's bet on odd reads: round 1, stake 500, win, returned 980, settled, outcome r r r w, reds 3, balance 9,000 before and 11,140 after
    And alice's bet on two_red reads: round 1, stake 300, lose, returned 0, settled, outcome r r r w, reds 3, balance 8,500 before and 11,140 after
    And alice's balance is 11,140
    And the oracle finds no difference

  @clause:REC-1 @clause:SH-4a
  Scenario: Each column of the bet record of a void round
    Given player alice has a balance of 10,000
    And player bob has a balance of 5,000
    And in round 1 the dealer forgets to shake
    When round 1 opens
    And alice bets 1,000 on odd
    And bob bets 5,000 on four_red
    And the round is played to the end
    Then alice's bet on odd reads: round 1, stake 1,000, refund, returned 1,000, void, outcome none, reds none, balance 10,000 before and 10,000 after
    And bob's bet on four_red reads: round 1, stake 5,000, refund, returned 5,000, void, outcome none, reds none, balance 5,000 before and 5,000 after
    And the oracle finds no difference
