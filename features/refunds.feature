@gli:4.16
Feature: Refunds with several players (REF-1)
  When a round is cancelled (ERR-3) or void (SH-4a, SH-4b, SH-5), every bet of every player is refunded exactly
  once: the stake returned in full, none left pending, none credited twice, every balance back where it was.

  Background:
    Given player alice has a balance of 10,000
    And player bob has a balance of 10,000

  @clause:REF-1 @clause:ERR-3
  Scenario: The supervisor pauses the round and cancels it: every player's every bet is refunded once
    When round 1 opens
    And alice bets 1,000 on big
    And alice bets 500 on four_red
    And bob bets 2,000 on small
    And bob bets 100 on odd
    And the supervisor pauses the round
    And the supervisor cancels the round
    And the round is played to the end
    Then the server cancels round 1 and refunds every bet
    And every bet of every player in round 1 is refunded exactly once
    And the oracle finds no difference

  @clause:REF-1 @clause:ERR-3
  Scenario: A pause outlasts its limit: every player's every bet is refunded once
    Given in round 1 a problem stops the table after 0.5 s and outlasts the pause timeout
    When round 1 opens
    And alice bets 1,000 on even
    And alice bets 300 on one_red
    And bob bets 700 on odd
    And the round is played to the end
    Then the server cancels round 1 and refunds every bet
    And every bet of every player in round 1 is refunded exactly once
    And the oracle finds no difference

  @clause:REF-1 @clause:SH-4a
  Scenario: The dealer forgot to shake: every player's every bet is refunded once
    Given in round 1 the dealer forgets to shake
    When round 1 opens
    And alice bets 1,000 on odd
    And alice bets 200 on four_white
    And bob bets 600 on big
    And the round is played to the end
    Then the server voids round 1 under SH-4a
    And every bet of every player in round 1 is refunded exactly once
    And the oracle finds no difference

  @clause:REF-1 @clause:SH-4b
  Scenario: The bowl is lifted before betting closes: every player's every bet is refunded once
    Given in round 1 the bowl is lifted before betting closes
    When round 1 opens
    And alice bets 1,000 on small
    And alice bets 400 on two_red
    And bob bets 900 on even
    And the round is played to the end
    Then the server voids round 1 under SH-4b
    And every bet of every player in round 1 is refunded exactly once
    And the oracle finds no difference

  @clause:REF-1 @clause:SH-5
  Scenario: The bowl touches a token on the lift: every player's every bet is refunded once
    Given round 1 lands r w r w
    And in round 1 the bowl touches token 2 when it is lifted
    When round 1 opens
    And alice bets 1,000 on two_red
    And alice bets 300 on big
    And bob bets 800 on four_of_a_kind
    And the round is played to the end
    Then the server voids round 1 under SH-5
    And every bet of every player in round 1 is refunded exactly once
    And the oracle finds no difference
