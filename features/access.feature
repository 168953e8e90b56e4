Feature: Access control and account isolation (ACC-1..ACC-4)
  A player acts only on their own account, from their own credentials; the supervisor's actions (the round's
  controls, corrections, creating players) need the supervisor's credentials; a request without credentials, or
  with credentials the server never issued, is refused and changes nothing; a player's credentials keep working
  after the player reconnects (fixtures/rules/ACCESS.md). Each request names its credentials; the judge checks
  every one of them.

  Background:
    Given player alice has a balance of 10,000
    And player bob has a balance of 10,000

  @clause:ACC-1
  Scenario: A bet naming another player's account is never booked to that account
    Given round 1 lands r r r w
    When round 1 opens
    And alice asks for a bet of 1,000 on big for bob's account
    Then that bet is refused or booked to alice's own account
    When the round is played to the end
    Then the server settles round 1 on r r r w
    And bob's balance is 10,000
    And the oracle finds no difference

  @clause:ACC-1
  Scenario: A player's credentials do not read another player's balance or bet record
    Given round 1 lands w w r r
    When round 1 opens
    And bob bets 500 on even
    And alice asks for bob's balance
    Then that request is refused
    When alice asks for bob's bet record
    Then that request is refused
    When the round is played to the end
    Then the server settles round 1 on w w r r
    And the oracle finds no difference

  @clause:ACC-2
  Scenario: A player's credentials on the supervisor's actions are refused and change nothing
    Given round 1 lands r w r w
    When round 1 opens
    And alice bets 1,000 on even
    And alice asks for the supervisor action pause
    Then that request is refused
    When bob asks for the supervisor action cancel
    Then that request is refused
    When alice asks for the supervisor action open
    Then that request is refused
    When the round is played to the end
    Then the server settles round 1 on r w r w
    And alice's balance is 10,960
    And the oracle finds no difference

  @clause:ACC-2
  Scenario: A player cannot resume a round the supervisor paused: it stays paused and is cancelled
    When round 1 opens
    And alice bets 1,000 on big
    And the supervisor pauses the round
    And alice asks for the supervisor action resume
    Then that request is refused
    When the round is played to the end
    Then the server cancels round 1 and refunds every bet
    And alice's balance is 10,000
    And the oracle finds no difference

  @clause:ACC-2
  Scenario: A player's credentials cannot correct a settled round: the refused corrections change nothing
    Given round 1 lands r r r w
    When round 1 opens
    And alice bets 1,000 on big
    And bob bets 1,000 on small
    And the round is played to the end
    Then the server settles round 1 on r r r w
    When alice asks for a correction of round 1 to r r w w
    Then that request is refused
    When bob asks for a correction of round 1 to w w w r
    Then that request is refused
    And alice's bet on big reads: round 1, stake 1,000, win, returned 1,960, settled, outcome r r r w, reds 3, balance 10,000 before and 10,960 after
    And alice's balance is 10,960
    And bob's balance is 9,000
    And the oracle finds no difference

  @clause:ACC-2
  Scenario: A player's credentials cannot create a player: the request is refused and no account opens
    Given round 1 lands w w w r
    When round 1 opens
    And alice bets 1,000 on small
    And alice asks for a new player carol with a balance of 50,000
    Then that request is refused
    And the server has no account for carol
    When the round is played to the end
    Then the server settles round 1 on w w w r
    And alice's balance is 10,960
    And the server has no account for carol
    And the oracle finds no difference

  @clause:ACC-3
  Scenario: Requests without credentials, or with credentials never issued, are refused and change nothing
    Given round 1 lands r r w w
    When round 1 opens
    And a client without credentials asks for a bet of 1,000 on big for alice's account
    Then that request is refused
    When a client with credentials the server never issued asks for a bet of 1,000 on small for bob's account
    Then that request is refused
    When a client without credentials asks for the supervisor action cancel
    Then that request is refused
    When a client with credentials the server never issued asks for the supervisor action pause
    Then that request is refused
    When a client without credentials asks for alice's balance
    Then that request is refused
    When a client with credentials the server never issued asks for bob's bet record
    Then that request is refused
    When a client without credentials asks for a session
    Then that request is refused
    When a client with credentials the server never issued asks for a session
    Then that request is refused
    When the round is played to the end
    Then the server settles round 1 on r r w w
    And alice's balance is 10,000
    And bob's balance is 10,000
    And the oracle finds no difference

  @clause:ACC-4
  Scenario: A player's credentials keep working after the player reconnects
    Given round 1 lands w r r r
    When round 1 opens
    And alice disconnects
    And alice reconnects
    And alice asks for a bet of 1,000 on odd for alice's account
    Then that request is accepted
    When alice asks for alice's balance
    Then that request is accepted
    When alice asks for a session
    Then that request is accepted
    When the round is played to the end
    Then the server settles round 1 on w r r r
    And alice's balance is 10,960
    And the oracle finds no difference
