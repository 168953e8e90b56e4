Feature: Betting period
  No bet is accepted once betting has closed (stakes and balances: limits.feature, LIM-1..LIM-4).

  @gli:C.6.4 @clause:GP-3
  Scenario: A bet after betting closed is rejected and changes nothing
    Given player alice has a balance of 10,000
    And round 1 lands r w w w
    When round 1 opens
    And alice bets 1,000 on one_red
    And betting closes
    And alice tries to bet 1,000 on big
    And the round is played to the end
    Then alice's bet is rejected with betting_closed
    And alice's bet record shows 1 bet
    And alice's balance is 12,800
    And the oracle finds no difference
