@gli:4.18.4 @gli:4.18.5
Feature: Correcting a misread outcome (COR-1)
  A supervisor corrects the outcome of the last settled round (manual mode): every bet of it is re-settled on the
  corrected faces, each balance moves by exactly the difference, and the bet record shows the corrected outcome.

  @clause:COR-1 @clause:REC-1
  Scenario: A correction re-settles every bet of the round on the corrected faces
    Given player alice has a balance of 10,000
    And player bob has a balance of 10,000
    And round 1 lands r r r w
    When round 1 opens
    And alice bets 1,000 on big
    And bob bets 1,000 on three_red
    And bob bets 500 on two_red
    And the round is played to the end
    Then the server settles round 1 on r r r w
    And alice's balance is 10,960
    And bob's balance is 12,300
    When the supervisor corrects round 1 to r r w w
    Then alice's bet on big reads: round 1, stake 1,000, push, returned 1,000, settled, outcome r r w w, reds 2, balance 10,000 before and 10,000 after
    And bob's bet on three_red reads: round 1, stake 1,000, lose, returned 0, settled, outcome r r w w, reds 2, balance 10,000 before and 8,500 after
    And bob's bet on two_red reads: round 1, stake 500, win, returned 1,250, settled, outcome r r w w, reds 2, balance 9,000 before and 9,750 after
    And alice's balance is 10,000
    And bob's balance is 9,750
    And alice's bet record shows 1 bet
    And bob's bet record shows 2 bets

  @clause:COR-1
  Scenario: A correction to anything but four faces is refused and changes nothing
    Given player alice has a balance of 10,000
    And round 1 lands r r w w
    When round 1 opens
    And alice bets 1,000 on two_red
    And the round is played to the end
    Then the server settles round 1 on r r w w
    And the supervisor's correction of round 1 to the faces r r r is refused
    And the supervisor's correction of round 1 to the faces r r w w r is refused
    And the supervisor's correction of round 1 to the faces r r x w is refused
    And alice's bet on two_red reads: round 1, stake 1,000, win, returned 2,500, settled, outcome r r w w, reds 2, balance 10,000 before and 11,500 after
    And alice's balance is 11,500
    And alice's bet record shows 1 bet
