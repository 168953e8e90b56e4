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

  @clause:BET-1
  Scenario: A bet on a type the game does not have is refused and changes nothing
    Given player alice has a balance of 10,000
    And round 1 lands r r r w
    When round 1 opens
    And alice tries to bet 1,000 on seven_red, a bet the game does not have
    Then alice's bet is refused
    And alice's balance is 10,000
    When alice bets 1,000 on big
    And the round is played to the end
    Then alice's bet record shows 1 bet
    And alice's bet on big returns 1,960
    And alice's balance is 10,960
    And the oracle finds no difference

  @gli:C.6.4 @clause:GP-3
  Scenario: A bet sent the moment betting closes, or between two rounds, is refused and changes nothing
    Given player alice has a balance of 10,000
    And round 1 lands r w w w
    When round 1 opens
    And alice bets 1,000 on one_red
    And alice tries to bet 1,000 on big the moment betting closes
    Then alice's bet is refused
    When the round is played to the end
    And alice tries to bet 1,000 on small
    Then alice's bet is refused
    And alice's bet record shows 1 bet
    And alice's balance is 12,800
    And the oracle finds no difference

  @clause:GP-3
  Scenario: A bet naming the round taking bets is accepted; one naming an earlier or a later round is refused
    Given player alice has a balance of 10,000
    And round 1 lands r r w w
    And round 2 lands r r r w
    When round 1 opens
    And the round is played to the end
    And round 2 opens
    And alice tries to bet 1,000 on big naming round 1
    Then alice's bet is refused
    When alice tries to bet 1,000 on big naming the round after it
    Then alice's bet is refused
    And alice's balance is 10,000
    When alice bets 1,000 on big naming round 2
    And the round is played to the end
    Then alice's bet record shows 1 bet
    And alice's bet on big returns 1,960
    And alice's balance is 10,960
    And the oracle finds no difference

  # The edge of the betting period: a bet sent a few tens of milliseconds before the announced close is a bet of the
  # round (the judge refuses a server that closes early and still announces the whole period).
  @clause:GP-3
  Scenario: A bet sent 50 ms before the close is taken
    Given player alice has a balance of 10,000
    And round 1 lands r r r w
    When round 1 opens
    And alice tries to bet 1,000 on big 50 ms before betting closes
    And the round is played to the end
    Then alice's bet record shows 1 bet
    And alice's bet on big returns 1,960
    And alice's balance is 10,960
    And the oracle finds no difference
