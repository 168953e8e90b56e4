@gli:4.16 @gli:2.8.2
Feature: Player disconnection (DC-1..DC-3)
  A player who disconnects does not stop the round; bets confirmed before the disconnection stay valid, are
  settled when the round ends, and can be reviewed afterwards in the bet record.

  Background:
    Given player alice has a balance of 10,000
    And player bob has a balance of 10,000

  @clause:DC-1 @clause:DC-2 @clause:DC-3
  Scenario: A player disconnects after the bet was confirmed: the round runs on and the bet settles
    Given round 1 lands r r r w
    When round 1 opens
    And alice bets 1,000 on big
    And bob bets 1,000 on small
    And alice disconnects
    And the round is played to the end
    Then the server settles round 1 on r r r w
    When alice reconnects
    Then alice's bet record shows 1 bet
    And alice's bet on big is win
    And alice's bet on big returns 1,960
    And alice's balance is 10,960
    And the oracle finds no difference

  @clause:DC-2 @clause:DC-3
  Scenario: A player loses the connection before the confirmation: the bet counts at most once
    Given round 1 lands w w w r
    When round 1 opens
    And bob bets 500 on odd and loses the connection before the confirmation
    And the round is played to the end
    And bob reconnects
    Then the server settles round 1 on w w w r
    And bob's bet record agrees with his balance
    And the oracle finds no difference

  @clause:DC-1 @clause:DC-3
  Scenario: A player who disconnected during one round finds both rounds in the bet record
    Given round 1 lands r r w w
    And round 2 lands w w w w
    When round 1 opens
    And alice bets 1,000 on even
    And alice disconnects
    And the round is played to the end
    And round 2 opens
    And bob bets 1,000 on four_white
    And the round is played to the end
    And alice reconnects
    Then alice's bet record shows 1 bet
    And alice's bet on even returns 1,960
    And bob's bet on four_white returns 15,000
    And the oracle finds no difference
