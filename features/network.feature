@gli:4.16
Feature: Network errors (NET-1)
  A network error during a game that has started does not stop it: results are issued when the connection is
  back. A game that had not started is cancelled and its bets returned.

  Background:
    Given player alice has a balance of 10,000

  @clause:NET-1 @clause:DC-2
  Scenario: The player's network fails during a started game: the game completes, results on reconnection
    Given round 1 lands w w w r
    When round 1 opens
    And alice bets 1,000 on one_red
    And betting closes
    And alice disconnects
    And the round is played to the end
    And alice reconnects
    Then the server settles round 1 on w w w r
    And alice's bet on one_red returns 3,800
    And alice's balance is 12,800
    And the oracle finds no difference

  @clause:NET-1
  Scenario: The table's network fails before the game starts: the round ends unplayed, bets returned
    When round 1 opens while the table's network is down
    And alice bets 1,000 on big
    And the round is played to the end
    Then the server ends round 1 without playing it and refunds every bet
    And alice's balance is 10,000
    And the oracle finds no difference
