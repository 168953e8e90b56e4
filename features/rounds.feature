Feature: Round after round, whatever order the table's reports arrive in (GP-1..GP-3)
  The table plays one round after another, and each device reports on its own line, so the server hears of the
  table's facts in whatever order the lines deliver them. A server that opens rounds on its own timer must open the
  next one when its gap is over, whenever its clock looks after it, neither before nor long after, and a read that
  reaches the server before the lift it follows must still settle the round.

  Background:
    Given player alice has a balance of 10,000

  @clause:GP-1 @clause:GP-3
  Scenario: A server that opens rounds on its own timer opens the next one after each round ends
    Given the server opens rounds on its own timer
    And round 1 lands r r w w
    And round 2 lands r w w w
    And round 3 lands r r r r
    When round 1 opens
    And alice bets 1,000 on two_red
    And the round is played to the end
    And round 2 opens
    And alice bets 1,000 on one_red
    And the round is played to the end
    And round 3 opens
    And alice bets 500 on four_red
    And the round is played to the end
    Then the server settles round 1 on r r w w
    And the server settles round 2 on r w w w
    And the server settles round 3 on r r r r
    And the server opened round 2 its round gap after it ended round 1
    And the server opened round 3 its round gap after it ended round 2
    And alice's balance is 21,300
    And the oracle finds no difference

  @clause:GP-3 @clause:EQ-3
  Scenario: The reader's read reaches the server before the report of the lift: the round settles on it
    Given round 1 lands w r r r
    When round 1 opens
    And alice bets 1,000 on three_red
    And the bowl sensor reports the lift of this round only 0.3 seconds after the bowl comes off
    And the round is played to the end
    Then the server settles round 1 on w r r r
    And alice's bet on three_red returns 3,800
    And alice's balance is 12,800
    And the oracle finds no difference
