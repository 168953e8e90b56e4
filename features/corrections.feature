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

  @clause:COR-1
  Scenario: Only the last settled round can be corrected, and only to other faces; every other correction is refused
    Given player alice has a balance of 10,000
    And round 1 lands r r w w
    And round 2 lands r r r w
    And round 3 lands w w w w
    When round 1 opens
    And alice bets 1,000 on two_red
    And the round is played to the end
    And round 2 opens
    And alice bets 1,000 on big
    And the round is played to the end
    Then the server settles round 2 on r r r w
    And the server refuses the supervisor's correction of round 1 to r w w w
    And the server refuses the supervisor's correction of round 2 to r r r w
    When round 3 opens
    Then the server refuses the supervisor's correction of round 3 to r r w w
    And alice's bet on two_red reads: round 1, stake 1,000, win, returned 2,500, settled, outcome r r w w, reds 2, balance 10,000 before and 11,500 after
    And alice's bet on big reads: round 2, stake 1,000, win, returned 1,960, settled, outcome r r r w, reds 3, balance 11,500 before and 12,460 after
    And alice's balance is 12,460
    And alice's bet record shows 2 bets

  @clause:COR-1 @clause:LIM-1
  Scenario: A correction that would take a balance below zero, by a single minor unit, is refused and changes nothing
    Given player alice has a balance of 1,999
    And round 1 lands w w w w
    And round 2 lands r r w w
    When round 1 opens
    And alice bets 1,000 on four_white
    And the round is played to the end
    And round 2 opens
    And alice bets 1,000 on two_red
    Then alice's balance is 14,999
    And the server refuses the supervisor's correction of round 1 to r w w w
    And alice's bet on four_white reads: round 1, stake 1,000, win, returned 15,000, settled, outcome w w w w, reds 0, balance 1,999 before and 15,999 after
    And alice's balance is 14,999
    When the round is played to the end
    Then the server settles round 2 on r r w w
    And alice's balance is 17,499

  @clause:COR-1 @clause:LIM-1
  Scenario: A correction that leaves a balance at exactly zero is accepted
    Given player alice has a balance of 2,000
    And round 1 lands w w w w
    And round 2 lands r r w w
    When round 1 opens
    And alice bets 1,000 on four_white
    And the round is played to the end
    And round 2 opens
    And alice bets 1,000 on two_red
    And the supervisor corrects round 1 to r w w w
    Then alice's bet on four_white is lose
    And alice's bet on four_white returns 0
    And alice's balance is 0
    When the round is played to the end
    Then the server settles round 2 on r r w w
    And alice's balance is 2,500
    And alice's bet record shows 2 bets
