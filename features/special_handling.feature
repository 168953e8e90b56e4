Feature: Special handling at the table (SH-1..SH-5)
  What the dealer does when the shake goes wrong, and what the server must do with the bets.

  Background:
    Given player alice has a balance of 10,000

  @clause:SH-1 @gli:4.18.4
  Scenario: Overlapping tokens are spread without turning any: the outcome is unchanged
    Given in round 1 the tokens overlap and land r r r w
    When round 1 opens
    And alice bets 1,000 on three_red
    And the round is played to the end
    Then the server asks for 0 re-shakes in round 1
    And the server settles round 1 on r r r w
    And alice's bet on three_red returns 3,800
    And the oracle finds no difference

  # Each drop is one re-shake toward the cap: two drops in a round, within a cap of 2 or more, never pause it.
  @clause:SH-2
  Scenario: Two drops in one round are two re-shakes, within the cap: the round settles
    Given the table's max_reshakes is at least 2
    And in round 1 the bowl drops during shake 1
    And in round 1 the plate drops during shake 2
    And in round 1 shake 3 lands r r w w
    When round 1 opens
    And alice bets 1,000 on two_red
    And the round is played to the end
    Then the server asks for 2 re-shakes in round 1
    And the server settles round 1 on r r w w
    And alice's bet on two_red returns 2,500
    And the oracle finds no difference

  @clause:SH-2
  Scenario Outline: A <item> dropped during the shake: shake again, the bets stand
    Given in round 1 the <item> drops during shake 1
    And in round 1 shake 2 lands w w r r
    When round 1 opens
    And alice bets 1,000 on big
    And alice bets 1,000 on two_red
    And the round is played to the end
    Then the server asks for 1 re-shake in round 1
    And the server settles round 1 on w w r r
    And alice's bet on big is push
    And alice's bet on two_red returns 2,500
    And alice's balance is 11,500
    And the oracle finds no difference

    Examples:
      | item  |
      | bowl  |
      | plate |
      | token |

  @clause:SH-3
  Scenario: A token left standing: shake again
    Given in round 1 token 2 is left standing after shake 1
    And in round 1 shake 2 lands r r r r
    When round 1 opens
    And alice bets 500 on four_red
    And the round is played to the end
    Then the server asks for 1 re-shake in round 1
    And the server settles round 1 on r r r r
    And alice's bet on four_red returns 7,500
    And the oracle finds no difference

  @clause:SH-3
  Scenario: A token left standing twice in a row: two re-shakes, then the round settles
    Given the table's max_reshakes is at least 2
    And in round 1 token 0 is left standing after shake 1
    And in round 1 token 3 is left standing after shake 2
    And in round 1 shake 3 lands w w w w
    When round 1 opens
    And alice bets 1,000 on four_white
    And the round is played to the end
    Then the server asks for 2 re-shakes in round 1
    And the server settles round 1 on w w w w
    And alice's bet on four_white returns 15,000
    And alice's balance is 24,000
    And the oracle finds no difference

  @clause:SH-3 @clause:ERR-1 @clause:ERR-3 @gli:4.16
  Scenario: Tokens keep standing past the re-shake cap: the round is paused, then cancelled and refunded
    Given in round 1 token 1 is left standing after every shake up to one past the re-shake cap
    And in round 1 the supervisor needs longer than the pause timeout to clear the re-shake cap
    When round 1 opens
    And alice bets 2,000 on even
    And the round is played to the end
    Then the server cancels round 1 and refunds every bet
    And alice's bet on even is refund
    And alice's balance is 10,000
    And the oracle finds no difference

  @clause:SH-3 @clause:ERR-1 @clause:ERR-2 @gli:4.16
  Scenario: Past the re-shake cap the supervisor clears the table quickly: the round resumes and settles
    # Counted since the round opened, the re-shake the supervisor cleared is past the cap again when its report
    # reaches the server after the resume, and pauses the round once more: the round settles only where a resume
    # restarts the count.
    Given the table's reshake_count is since_resume
    And in round 1 token 1 is left standing after every shake up to one past the re-shake cap
    And in round 1 the shake after the re-shake cap lands r r w w
    And in round 1 the supervisor needs 0.3 s to clear the re-shake cap
    When round 1 opens
    And alice bets 2,000 on two_red
    And the round is played to the end
    Then the server asks for one re-shake more than the cap in round 1
    And the server settles round 1 on r r w w
    And alice's bet on two_red returns 5,000
    And alice's balance is 13,000
    And the oracle finds no difference

  @clause:SH-4a
  Scenario: The dealer forgot to shake: the round is void and every bet returned
    Given in round 1 the dealer forgets to shake
    When round 1 opens
    And alice bets 1,000 on odd
    And the round is played to the end
    Then the server voids round 1 under SH-4a
    And alice's bet on odd returns 1,000
    And alice's balance is 10,000
    And the oracle finds no difference

  @clause:SH-4b @gli:C.6.4
  Scenario: The bowl is lifted before betting ends: the round is void and every bet returned
    Given in round 1 the bowl is lifted before betting closes
    When round 1 opens
    And alice bets 1,000 on small
    And the round is played to the end
    Then the server voids round 1 under SH-4b
    And alice's bet on small is refund
    And alice's balance is 10,000
    And the oracle finds no difference

  @clause:SH-4a @clause:SH-4b
  Scenario: The dealer forgot to shake and lifted the bowl early: the first cause established, SH-4b, decides
    Given in round 1 the dealer forgets to shake
    And in round 1 the bowl is lifted before betting closes
    When round 1 opens
    And alice bets 1,000 on odd
    And the round is played to the end
    Then the server voids round 1 under SH-4b
    And alice's bet on odd returns 1,000
    And alice's balance is 10,000
    And the oracle finds no difference

  @clause:SH-5
  Scenario: The bowl touches a token on the lift: the round is void and every bet returned
    Given round 1 lands r r w w
    And in round 1 the bowl touches token 1 when it is lifted
    When round 1 opens
    And alice bets 1,000 on two_red
    And the round is played to the end
    Then the server voids round 1 under SH-5
    And alice's bet on two_red returns 1,000
    And alice's balance is 10,000
    And the oracle finds no difference

  @clause:SH-4a
  Scenario: A shake made during betting whose reports reach the server after the close still counts
    Given the table's device_times is used
    And round 1 lands r w w w
    And round 2 lands r r w w
    When round 1 opens
    And the round is played to the end
    And round 2 opens
    And the shaker's reports of this round reach the server only when betting closes
    And alice bets 1,000 on two_red
    And the reader's deciding read of this round is lost
    And betting closes
    And 1 seconds pass
    And the reader reads the tokens of this round again
    And the round is played to the end
    Then the server settles round 1 on r w w w
    And the server settles round 2 on r r w w
    And alice's bet on two_red returns 2,500
    And the oracle finds no difference

  @clause:SH-4a @clause:ERR-1 @clause:ERR-2
  Scenario: A shake reported late still counts when a problem pauses the round before its reports arrive
    Given the table's device_times is used
    And round 1 lands r r w w
    And round 2 lands w r w w
    And in round 2 a problem stops the table after 1.03 s and is solved after 0.3 s
    When round 1 opens
    And the round is played to the end
    And round 2 opens
    And the shaker's reports of this round reach the server only 0.2 seconds after betting closes
    And alice bets 1,000 on one_red
    And the round is played to the end
    Then the server settles round 1 on r r w w
    And the server settles round 2 on w r w w
    And alice's bet on one_red returns 3,800
    And the oracle finds no difference

  @clause:SH-4a @clause:GP-2
  Scenario: A shake whose end the shaker never reports is no complete shake: the lift voids the round
    Given round 1 lands r r w w
    When round 1 opens
    And the shaker's END report of this round is lost
    And alice bets 1,000 on two_red
    And the round is played to the end
    Then the server voids round 1 under SH-4a
    And alice's bet on two_red is refund
    And alice's balance is 10,000

  # Found by the exploration (certify --explore 2000, seed 1): the reference server applied the re-shake's reports,
  # which reached it before the late report of the lift before them, to the shake before it; at the next lift it
  # found no complete shake and voided the round (SH-4a). The lift is late by less than the reorder grace (0.5 s).
  @clause:SH-3
  Scenario: A standing token is shaken again while the report of the lift before it is late: the round settles
    Given in round 3 token 0 is left standing after shake 1
    And in round 3 shake 2 lands r w w w
    When round 1 opens
    And the round is played to the end
    And round 2 opens
    And the round is played to the end
    And round 3 opens
    And alice bets 1,000 on one_red
    And the bowl sensor reports the lift of this round only 0.3 seconds after the bowl comes off
    And the round is played to the end
    Then the server asks for 1 re-shake in round 3
    And alice's bet on one_red returns 3,800
    And the oracle finds no difference

  # Found by the exploration (certify --explore 2000, seed 1): the reference server voided round 2 under SH-5. Once
  # the shaker has sent timed reports (round 1), the server waits its reorder grace for a late shake report at the
  # close, and the lift came within it. SH-4a is established when betting closes, before the lift that touches a
  # token (RULES.md, precedence of voids).
  @clause:SH-4a @clause:SH-5
  Scenario: The dealer forgot to shake and the bowl touches a token when it is lifted: void under SH-4a
    Given round 1 lands r r w w
    And in round 2 the dealer forgets to shake
    And in round 2 the bowl touches token 0 when it is lifted
    When round 1 opens
    And the round is played to the end
    And round 2 opens
    And alice bets 1,000 on big
    And the round is played to the end
    Then the server voids round 2 under SH-4a
    And alice's bet on big is refund
    And the oracle finds no difference

  @clause:SH-4a
  Scenario: The dealer forgot to shake and the report of the lift is lost: the round is void all the same
    Given round 1 lands r r w w
    And in round 2 the dealer forgets to shake
    When round 1 opens
    And the round is played to the end
    And the table rests 5 seconds before the next round
    And round 2 opens
    And alice bets 1,000 on odd
    And the bowl sensor's report of the lift of this round is lost
    And the round is played to the end
    Then the server settles round 1 on r r w w
    And the server voids round 2 under SH-4a
    And alice's bet on odd is refund
    And alice's balance is 10,000
    And the oracle finds no difference

  @clause:SH-4b
  Scenario: A lift before betting ends whose report reaches the server after the close still voids the round
    Given round 1 lands r r w w
    And in round 1 the bowl is lifted before betting closes
    When round 1 opens
    And alice bets 1,000 on two_red
    And the reader's read of this round is lost
    And the bowl sensor reports the lift of this round only 0.4 seconds after the bowl comes off
    And the round is played to the end
    Then the server voids round 1 under SH-4b
    And alice's bet on two_red is refund
    And alice's balance is 10,000
    And the oracle finds no difference

  @clause:SH-4a @clause:GP-2
  Scenario: A shake started only after betting closed is no shake of the betting period: the round is void
    Given round 1 lands r r w w
    And in round 2 the dealer forgets to shake
    When round 1 opens
    And the round is played to the end
    And round 2 opens
    And alice bets 1,000 on odd
    And the shaker reports a shake that starts 0.02 seconds after betting closes
    And the round is played to the end
    Then the server settles round 1 on r r w w
    And the server voids round 2 under SH-4a
    And alice's bet on odd is refund
    And alice's balance is 10,000
    And the oracle finds no difference

  @clause:GP-3
  Scenario: A stray shake start after the close keeps the lift waiting, then the round settles on the read
    Given round 1 lands w w r r
    When round 1 opens
    And alice bets 1,000 on two_red
    And the shaker reports a shake start 0.02 seconds after betting closes and never its end
    And the round is played to the end
    Then the server settles round 1 on w w r r
    And alice's bet on two_red returns 2,500
    And alice's balance is 11,500
    And the oracle finds no difference
