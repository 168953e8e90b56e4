@gli:4.16 @gli:C.6.3
Feature: A settlement is all or nothing (ATOM-1)
  The game server is killed (kill -9; in-process: only its committed ledger survives) the moment it reports a round
  ended, while it may still be writing the settlement, and restarted on its ledger: either every bet of the round is
  settled and every balance credited, or the round is refunded as a whole; the bet record agrees with the balance.

  @clause:ATOM-1 @clause:DC-2
  Scenario: The server is killed as it settles a round with several players' bets
    Given player alice has a balance of 10,000
    And player bob has a balance of 10,000
    And player carol has a balance of 10,000
    And round 1 lands r r r w
    When round 1 opens
    And alice bets 1,000 on big
    And alice bets 500 on three_red
    And bob bets 1,000 on small
    And carol bets 300 on four_red
    And the server is killed as soon as it reports round 1 ended, and restarted
    Then round 1 is settled or refunded as a whole and every bet record agrees with its balance
    And the oracle finds no difference

  # A crash point inside the ledger write that ends the round: the server dies just before statement k + 1 of it
  # (BEGIN, each INSERT and UPDATE, COMMIT), for every k up to past the write's end. What it committed before the
  # crash stays; whatever the restart makes of it, the round is settled or refunded as a whole.
  @clause:ATOM-1 @clause:ERR-3
  Scenario Outline: The server dies after <k> statements of the settlement's write
    Given player alice has a balance of 10,000
    And player bob has a balance of 10,000
    And round 1 lands r r r w
    When round 1 opens
    And alice bets 1,000 on big
    And alice bets 500 on three_red
    And bob bets 1,000 on small
    And the server dies after <k> statements of the write that ends round 1, and is restarted
    Then round 1 is settled or refunded as a whole and every bet record agrees with its balance
    And no balance is negative
    And the oracle finds no difference

    Examples:
      | k  |
      | 0  |
      | 1  |
      | 2  |
      | 3  |
      | 4  |
      | 5  |
      | 6  |
      | 7  |
      | 8  |
      | 9  |
      | 10 |
      | 11 |
      | 12 |
