@clause:EQ-3
Feature: Payouts (PAY-1..PAY-10)
  Every bet type against every number of reds, with exact amounts in minor units. A stake of 1,000 from an
  opening balance of 100,000: a win returns the stake plus stake x odds, a push (Big/Small on two reds)
  returns the stake, a loss returns nothing. Amounts are derived by hand from RULES.md.

  @clause:PAY-1 @clause:GP-3
  Scenario Outline: Four red pays 14 to 1 on four reds
    Given player alice has a balance of 100,000
    And round 1 lands <faces>
    When round 1 opens
    And alice bets 1,000 on four_red
    And the round is played to the end
    Then the server settles round 1 on <faces>
    And alice's bet on four_red is <result>
    And alice's bet on four_red returns <returned>
    And alice's balance is <balance>
    And the oracle finds no difference

    Examples:
      | reds | faces   | result | returned | balance |
      | 0    | w w w w | lose   | 0        | 99000   |
      | 1    | w w w r | lose   | 0        | 99000   |
      | 2    | w w r r | lose   | 0        | 99000   |
      | 3    | w r r r | lose   | 0        | 99000   |
      | 4    | r r r r | win    | 15000    | 114000  |

  @clause:PAY-2 @clause:GP-3
  Scenario Outline: Three red pays 2.8 to 1 on three reds
    Given player alice has a balance of 100,000
    And round 1 lands <faces>
    When round 1 opens
    And alice bets 1,000 on three_red
    And the round is played to the end
    Then the server settles round 1 on <faces>
    And alice's bet on three_red is <result>
    And alice's bet on three_red returns <returned>
    And alice's balance is <balance>
    And the oracle finds no difference

    Examples:
      | reds | faces   | result | returned | balance |
      | 0    | w w w w | lose   | 0        | 99000   |
      | 1    | w w w r | lose   | 0        | 99000   |
      | 2    | w w r r | lose   | 0        | 99000   |
      | 3    | w r r r | win    | 3800     | 102800  |
      | 4    | r r r r | lose   | 0        | 99000   |

  @clause:PAY-3 @clause:GP-3
  Scenario Outline: Two red pays 1.5 to 1 on two reds
    Given player alice has a balance of 100,000
    And round 1 lands <faces>
    When round 1 opens
    And alice bets 1,000 on two_red
    And the round is played to the end
    Then the server settles round 1 on <faces>
    And alice's bet on two_red is <result>
    And alice's bet on two_red returns <returned>
    And alice's balance is <balance>
    And the oracle finds no difference

    Examples:
      | reds | faces   | result | returned | balance |
      | 0    | w w w w | lose   | 0        | 99000   |
      | 1    | w w w r | lose   | 0        | 99000   |
      | 2    | w w r r | win    | 2500     | 101500  |
      | 3    | w r r r | lose   | 0        | 99000   |
      | 4    | r r r r | lose   | 0        | 99000   |

  @clause:PAY-4 @clause:GP-3
  Scenario Outline: One red pays 2.8 to 1 on one red
    Given player alice has a balance of 100,000
    And round 1 lands <faces>
    When round 1 opens
    And alice bets 1,000 on one_red
    And the round is played to the end
    Then the server settles round 1 on <faces>
    And alice's bet on one_red is <result>
    And alice's bet on one_red returns <returned>
    And alice's balance is <balance>
    And the oracle finds no difference

    Examples:
      | reds | faces   | result | returned | balance |
      | 0    | w w w w | lose   | 0        | 99000   |
      | 1    | w w w r | win    | 3800     | 102800  |
      | 2    | w w r r | lose   | 0        | 99000   |
      | 3    | w r r r | lose   | 0        | 99000   |
      | 4    | r r r r | lose   | 0        | 99000   |

  @clause:PAY-5 @clause:GP-3
  Scenario Outline: Four white pays 14 to 1 on no red
    Given player alice has a balance of 100,000
    And round 1 lands <faces>
    When round 1 opens
    And alice bets 1,000 on four_white
    And the round is played to the end
    Then the server settles round 1 on <faces>
    And alice's bet on four_white is <result>
    And alice's bet on four_white returns <returned>
    And alice's balance is <balance>
    And the oracle finds no difference

    Examples:
      | reds | faces   | result | returned | balance |
      | 0    | w w w w | win    | 15000    | 114000  |
      | 1    | w w w r | lose   | 0        | 99000   |
      | 2    | w w r r | lose   | 0        | 99000   |
      | 3    | w r r r | lose   | 0        | 99000   |
      | 4    | r r r r | lose   | 0        | 99000   |

  @clause:PAY-6 @clause:GP-3
  Scenario Outline: Four of a kind pays 6.5 to 1 on four reds or four whites
    Given player alice has a balance of 100,000
    And round 1 lands <faces>
    When round 1 opens
    And alice bets 1,000 on four_of_a_kind
    And the round is played to the end
    Then the server settles round 1 on <faces>
    And alice's bet on four_of_a_kind is <result>
    And alice's bet on four_of_a_kind returns <returned>
    And alice's balance is <balance>
    And the oracle finds no difference

    Examples:
      | reds | faces   | result | returned | balance |
      | 0    | w w w w | win    | 7500     | 106500  |
      | 1    | w w w r | lose   | 0        | 99000   |
      | 2    | w w r r | lose   | 0        | 99000   |
      | 3    | w r r r | lose   | 0        | 99000   |
      | 4    | r r r r | win    | 7500     | 106500  |

  @clause:PAY-7 @clause:GP-3
  Scenario Outline: Odd pays 0.96 to 1 on one or three reds
    Given player alice has a balance of 100,000
    And round 1 lands <faces>
    When round 1 opens
    And alice bets 1,000 on odd
    And the round is played to the end
    Then the server settles round 1 on <faces>
    And alice's bet on odd is <result>
    And alice's bet on odd returns <returned>
    And alice's balance is <balance>
    And the oracle finds no difference

    Examples:
      | reds | faces   | result | returned | balance |
      | 0    | w w w w | lose   | 0        | 99000   |
      | 1    | w w w r | win    | 1960     | 100960  |
      | 2    | w w r r | lose   | 0        | 99000   |
      | 3    | w r r r | win    | 1960     | 100960  |
      | 4    | r r r r | lose   | 0        | 99000   |

  @clause:PAY-8 @clause:GP-3
  Scenario Outline: Even pays 0.96 to 1 on zero, two or four reds
    Given player alice has a balance of 100,000
    And round 1 lands <faces>
    When round 1 opens
    And alice bets 1,000 on even
    And the round is played to the end
    Then the server settles round 1 on <faces>
    And alice's bet on even is <result>
    And alice's bet on even returns <returned>
    And alice's balance is <balance>
    And the oracle finds no difference

    Examples:
      | reds | faces   | result | returned | balance |
      | 0    | w w w w | win    | 1960     | 100960  |
      | 1    | w w w r | lose   | 0        | 99000   |
      | 2    | w w r r | win    | 1960     | 100960  |
      | 3    | w r r r | lose   | 0        | 99000   |
      | 4    | r r r r | win    | 1960     | 100960  |

  @clause:PAY-9 @clause:GP-3
  Scenario Outline: Big pays 0.96 to 1 on three or four reds and returns the stake on two
    Given player alice has a balance of 100,000
    And round 1 lands <faces>
    When round 1 opens
    And alice bets 1,000 on big
    And the round is played to the end
    Then the server settles round 1 on <faces>
    And alice's bet on big is <result>
    And alice's bet on big returns <returned>
    And alice's balance is <balance>
    And the oracle finds no difference

    Examples:
      | reds | faces   | result | returned | balance |
      | 0    | w w w w | lose   | 0        | 99000   |
      | 1    | w w w r | lose   | 0        | 99000   |
      | 2    | w w r r | push   | 1000     | 100000  |
      | 3    | w r r r | win    | 1960     | 100960  |
      | 4    | r r r r | win    | 1960     | 100960  |

  @clause:PAY-10 @clause:GP-3
  Scenario Outline: Small pays 0.96 to 1 on zero or one red and returns the stake on two
    Given player alice has a balance of 100,000
    And round 1 lands <faces>
    When round 1 opens
    And alice bets 1,000 on small
    And the round is played to the end
    Then the server settles round 1 on <faces>
    And alice's bet on small is <result>
    And alice's bet on small returns <returned>
    And alice's balance is <balance>
    And the oracle finds no difference

    Examples:
      | reds | faces   | result | returned | balance |
      | 0    | w w w w | win    | 1960     | 100960  |
      | 1    | w w w r | win    | 1960     | 100960  |
      | 2    | w w r r | push   | 1000     | 100000  |
      | 3    | w r r r | lose   | 0        | 99000   |
      | 4    | r r r r | lose   | 0        | 99000   |
