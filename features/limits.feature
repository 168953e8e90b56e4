@gli:4.3.3
Feature: Betting limits (LIM-1..LIM-4)
  A stake above the balance, off the chip unit (100 minor units) or outside the table limits (100 to 1,000,000) is
  refused and changes nothing; a stake of exactly the balance, the minimum or the maximum is accepted; the largest
  payout is paid in full, in whole minor units. The numbers are the default table's (docs/table-configuration.md):
  on a bench whose table configuration takes a stake a scenario expects refused, or refuses one it stakes, that
  scenario is not applicable; the last scenario names its stakes by the bench's own chip unit and limits.

  @clause:LIM-1
  Scenario: A stake above the balance is refused and changes nothing; the whole balance may then be staked
    Given player alice has a balance of 1,000
    And round 1 lands w w w r
    When round 1 opens
    And alice tries to bet 1,100 on small
    Then alice's bet is refused
    And alice's balance is 1,000
    When alice bets 1,000 on small
    And alice tries to bet 100 on odd
    Then alice's bet is refused
    And alice's balance is 0
    When the round is played to the end
    Then alice's bet record shows 1 bet
    And alice's bet on small returns 1,960
    And alice's balance is 1,960
    And the oracle finds no difference

  @clause:LIM-1
  Scenario: A player whose balance is 0 has a wallet, and any stake of theirs is refused
    Given player alice has a balance of 0
    And player bob has a balance of 1,000
    And round 1 lands r r w w
    When round 1 opens
    And alice tries to bet 100 on even
    Then alice's bet is refused
    When bob bets 1,000 on even
    And the round is played to the end
    Then alice's bet record shows 0 bets
    And alice's balance is 0
    And bob's bet on even returns 1,960
    And bob's balance is 1,960
    And the oracle finds no difference

  @clause:LIM-2
  Scenario: A stake that is not a whole number of chips is refused and changes nothing
    Given player alice has a balance of 10,000
    And round 1 lands r r r w
    When round 1 opens
    And alice tries to bet 150 on big
    Then alice's bet is refused
    When alice tries to bet 1,050 on three_red
    Then alice's bet is refused
    When alice tries to bet 1 on odd
    Then alice's bet is refused
    And alice's balance is 10,000
    When alice bets 1,100 on big
    And the round is played to the end
    Then alice's bet record shows 1 bet
    And alice's bet on big returns 2,156
    And alice's balance is 11,056
    And the oracle finds no difference

  @clause:LIM-3
  Scenario: Stakes below the minimum or above the maximum are refused; the minimum and the maximum are accepted
    Given player alice has a balance of 2,000,000
    And round 1 lands r r w w
    When round 1 opens
    And alice tries to bet 0 on even
    Then alice's bet is refused
    When alice tries to bet 1,000,100 on two_red
    Then alice's bet is refused
    And alice's balance is 2,000,000
    When alice bets 100 on even
    And alice bets 1,000,000 on two_red
    And the round is played to the end
    Then alice's bet record shows 2 bets
    And alice's bet on even returns 196
    And alice's bet on two_red returns 2,500,000
    And alice's balance is 3,500,096
    And the oracle finds no difference

  @clause:LIM-4 @clause:PAY-5 @clause:PAY-6
  Scenario: The largest payout is paid in full: the maximum stake on four white at 14 to 1
    Given player alice has a balance of 1,000,000
    And player bob has a balance of 1,000,000
    And round 1 lands w w w w
    When round 1 opens
    And alice bets 1,000,000 on four_white
    And bob bets 1,000,000 on four_of_a_kind
    And the round is played to the end
    Then the server settles round 1 on w w w w
    And alice's bet on four_white returns 15,000,000
    And alice's balance is 15,000,000
    And bob's bet on four_of_a_kind returns 7,500,000
    And bob's balance is 7,500,000
    And the oracle finds no difference

  # The stakes follow the bench's table configuration (docs/table-configuration.md): the chip unit and the limits are
  # the certified server's own, so this scenario holds on every table; the ones above use the default table's numbers.
  @clause:LIM-2 @clause:LIM-3
  Scenario: The table's own chip unit and limits decide: off the chip, below the minimum or above the maximum is refused
    Given player alice holds twice the table maximum
    And round 1 lands r r w w
    When round 1 opens
    And alice tries to bet one and a half chips on big
    Then alice's bet is refused
    When alice tries to bet the table minimum less one chip on even
    Then alice's bet is refused
    When alice tries to bet the table maximum plus one chip on two_red
    Then alice's bet is refused
    When alice bets the table minimum on even
    And alice bets the table maximum on two_red
    And the round is played to the end
    Then alice's bet record shows 2 bets
    And the oracle finds no difference
