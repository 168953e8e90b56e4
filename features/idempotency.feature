@gli:4.16 @gli:C.6.8
Feature: Idempotent bets (IDEM-1, IDEM-2)
  A bet sent again with the same client bet id and the same content (a retry after a lost reply) is placed once and
  gets the original confirmation, also after betting closed and after a server restart; the same id with another
  content is refused.

  @clause:IDEM-1 @clause:DC-2
  Scenario: A retried bet is placed once; the same id with another content is refused
    Given player alice has a balance of 10,000
    And round 1 lands r r r w
    When round 1 opens
    And alice bets 1,000 on big
    And alice sends that bet again
    Then alice's retry gets the original confirmation
    And alice's balance is 9,000
    When alice sends that bet id again with 2,000 on big
    Then alice's bet is refused
    And alice's balance is 9,000
    When betting closes
    And alice sends that bet again
    Then alice's retry gets the original confirmation
    When the round is played to the end
    Then alice's bet record shows 1 bet
    And alice's bet on big returns 1,960
    And alice's balance is 10,960
    And the oracle finds no difference

  @clause:IDEM-2 @clause:ERR-3
  Scenario: A bet retried after a server restart gets the original confirmation, not a bet in the next round
    Given player alice has a balance of 10,000
    And round 2 lands r r r r
    When round 1 opens
    And alice bets 1,000 on big
    And the server is killed and restarted
    And the round is played to the end
    And round 2 opens
    And alice sends that bet again
    Then alice's retry gets the original confirmation
    And the server cancels round 1 and refunds every bet
    When the round is played to the end
    Then the server settles round 2 on r r r r
    And alice's bet record shows 1 bet
    And alice's balance is 10,000

  # Idempotency keys are kept for every bet, not only those of the round in play: a bet of a round settled before
  # the restart, sent again after it, still gets its original confirmation and places nothing.
  @clause:IDEM-2
  Scenario: A bet of a round settled before a server restart, retried after it, gets the original confirmation
    Given player alice has a balance of 10,000
    And round 1 lands r r r w
    And round 2 lands w w w w
    When round 1 opens
    And alice bets 1,000 on big
    And the round is played to the end
    And the server is killed and restarted
    And round 2 opens
    And alice sends that bet again
    Then alice's retry gets the original confirmation
    When the round is played to the end
    Then alice's bet record shows 1 bet
    And alice's balance is 10,960
    And the oracle finds no difference

  @clause:IDEM-1
  Scenario: The same bet id with another bet type or another stake is refused every time and changes nothing
    Given player alice has a balance of 10,000
    And round 1 lands w w w r
    When round 1 opens
    And alice bets 1,000 on small
    And alice sends that bet id again with 1,000 on big
    Then alice's bet is refused
    When alice sends that bet id again with 1,000 on two_red
    Then alice's bet is refused
    When alice sends that bet id again with 2,000 on small
    Then alice's bet is refused
    When alice sends that bet id again with 100 on small
    Then alice's bet is refused
    And alice's balance is 9,000
    When alice sends that bet again
    Then alice's retry gets the original confirmation
    When the round is played to the end
    Then alice's bet record shows 1 bet
    And alice's bet on small returns 1,960
    And alice's balance is 10,960
    And the oracle finds no difference

  # A client bet id is the client's own: another player's bet with the same id is a bet of its own, never a retry.
  @clause:IDEM-1
  Scenario: Two players' bets with the same client bet id are two bets, each with its own confirmation
    Given player alice has a balance of 10,000
    And player bob has a balance of 10,000
    And round 1 lands w r r r
    When round 1 opens
    And alice bets 1,000 on big
    And bob bets 1,000 on small with the client bet id of alice's bet
    And the round is played to the end
    Then alice's bet record shows 1 bet
    And bob's bet record shows 1 bet
    And alice's balance is 10,960
    And bob's balance is 9,000
    And the oracle finds no difference
