@clause:GP-1 @clause:GP-2 @clause:GP-3 @clause:EQ-1 @clause:EQ-2 @clause:EQ-3
Feature: A normal round (GP-1..GP-3, EQ-1..EQ-3)
  Four tokens go on the plate, the dealer covers them with the bowl and shakes during betting, lifts the bowl
  once betting has closed, and bets settle on the number of red faces showing.

  @gli:2.8.2
  Scenario: A round is played and settled on the revealed faces
    Given player alice has a balance of 10,000
    And player bob has a balance of 5,000
    And round 1 lands r w r r
    When round 1 opens
    And alice bets 1,000 on three_red
    And bob bets 500 on small
    And the round is played to the end
    Then the table placed four tokens, covered them and shook before revealing round 1
    And the server settles round 1 on r w r r
    And alice's bet on three_red returns 3,800
    And bob's bet on small returns 0
    And alice's balance is 12,800
    And bob's balance is 4,500
    And the oracle finds no difference
