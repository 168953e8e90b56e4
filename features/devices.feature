Feature: Device identity, replayed results, line noise and procedure violations (DEV-1..3, PROC-1..2)
  Frames the table did not send are put on its device lines, the way a hostile or broken device would send them:
  a valid result on another device's line, an earlier round's result sent again, bursts of noise with a valid check,
  a read that contradicts what the camera saw. None of them may decide a round or move money. Each scenario fails on
  a server with the matching defect (checked against the reference server with the defect planted: one that takes
  the device from the frame's src, that accepts untagged results, that logs every ignored report, that settles on a
  read contradicting the overlapped one, that lets a lift with no BOWL ON before it stand). Not applicable on a
  bench that forbids faults, on a line whose device end cannot forge frames, or, for a result on another device's
  line, where that line carries the reader too (one bus for every device).

  Background:
    Given player alice has a balance of 10,000

  @clause:DEV-1 @gli:4.18.5
  Scenario Outline: A reader's result sent on the <device> line does not count
    Given round 1 lands w w r r
    When round 1 opens
    And alice bets 1,000 on four_red
    And a READER RESULT of r r r r for this round arrives on the <device> line after the close
    And the round is played to the end
    Then the server settles round 1 on w w r r
    And alice's bet on four_red returns 0
    And alice's balance is 9,000
    And the oracle finds no difference

    Examples:
      | device  |
      | console |
      | bowl    |
      | lamp    |

  @clause:DEV-2 @gli:4.18.5
  Scenario: An earlier round's result sent again untagged does not decide this round
    Given round 1 lands r r r r
    And round 2 lands w w w w
    When round 1 opens
    And the round is played to the end
    And round 2 opens
    And alice bets 1,000 on four_white
    And the reader sends round 1's result again untagged as the bowl comes off
    And the round is played to the end
    Then the server settles round 1 on r r r r
    And the server settles round 2 on w w w w
    And alice's bet on four_white returns 15,000
    And alice's balance is 24,000
    And the oracle finds no difference

  @clause:DEV-2 @gli:4.18.5
  Scenario: A result for a round already decided does not decide the next one
    Given round 1 lands r r r r
    And round 2 lands w w w w
    When round 1 opens
    And the round is played to the end
    And round 2 opens
    And alice bets 1,000 on four_red
    And the reader sends round 1's result again as the bowl comes off
    And the round is played to the end
    Then the server settles round 2 on w w w w
    And alice's bet on four_red returns 0
    And alice's balance is 9,000
    And the oracle finds no difference

  @clause:DEV-2 @gli:4.18.5
  Scenario: An earlier round's result sent again untagged between two rounds decides nothing
    Given round 1 lands r r r r
    And round 2 lands w w w w
    When round 1 opens
    And the round is played to the end
    And the reader sends round 1's result again untagged before the next round opens
    And round 2 opens
    And alice bets 1,000 on four_white
    And the round is played to the end
    Then the server settles round 1 on r r r r
    And the server settles round 2 on w w w w
    And alice's bet on four_white returns 15,000
    And alice's balance is 24,000
    And the oracle finds no difference

  @clause:DEV-3 @gli:C.6.8
  Scenario Outline: Noise on the <device> line changes neither the outcome nor the money, and is counted
    Given round 1 lands r w r w
    When round 1 opens
    And alice bets 1,000 on even
    And 300 noise frames arrive on the <device> line as the bowl comes off
    And the round is played to the end
    Then the server settles round 1 on r w r w
    And alice's bet on even returns 1,960
    And alice's balance is 10,960
    And the oracle finds no difference
    And the server counted the noise and its event log grew by at most 40 entries

    Examples:
      | device |
      | reader |
      | bowl   |
      | shaker |

  @clause:PROC-1 @clause:ERR-1 @clause:ERR-3 @gli:4.18.4
  Scenario: A read that contradicts the faces seen before the tokens were spread pauses the round
    Given in round 1 the tokens overlap and land r r r w
    When round 1 opens
    And alice bets 1,000 on one_red
    And the reader reads the overlapping tokens again as w w w r before they are spread
    And the round is played to the end
    Then the server cancels round 1 and refunds every bet
    And alice's balance is 10,000

  @clause:PROC-1 @clause:ERR-1 @clause:ERR-3 @gli:4.18.4
  Scenario Outline: The reads reach the server <late> s before the report of the lift: the contradicting one still pauses the round
    Given in round 1 the tokens overlap and land r r r w
    When round 1 opens
    And alice bets 1,000 on one_red
    And the bowl sensor reports the lift of this round only <late> seconds after the bowl comes off
    And the reader reads the overlapping tokens again as w w w r before they are spread
    And the round is played to the end
    Then the server cancels round 1 and refunds every bet
    And alice's balance is 10,000

    Examples:
      | late |
      | 0.1  |
      | 0.3  |

  @clause:PROC-1 @clause:ERR-1 @clause:ERR-2 @gli:4.18.4
  Scenario: Once the supervisor resumes, a read that agrees with the faces seen settles the round
    Given in round 1 the tokens overlap and land r r r w
    When round 1 opens
    And alice bets 1,000 on three_red
    And the reader reads the overlapping tokens again as w w w r before they are spread
    And the server pauses round 1
    And the supervisor resumes the round
    And the round is played to the end
    Then the server settles round 1 on r r r w
    And alice's bet on three_red returns 3,800
    And the oracle finds no difference

  @clause:PROC-2 @clause:SH-4a
  Scenario: A round whose bowl was never reported on the plate is void, every bet returned
    Given round 1 lands r r r r
    When round 1 opens
    And alice bets 1,000 on four_red
    And the bowl sensor does not report the bowl put on in this round
    And the round is played to the end
    Then the server voids round 1 under SH-4a
    And alice's bet on four_red is refund
    And alice's balance is 10,000

  @clause:PROC-2 @clause:SH-3 @clause:SH-4a
  Scenario: A lift with no BOWL ON since the lift before the re-shake voids the round
    Given in round 1 token 2 is left standing after shake 1
    And in round 1 shake 2 lands r r w w
    When round 1 opens
    And alice bets 1,000 on two_red
    And the dealer has finished shaking
    And the bowl sensor does not report the bowl put on in this round
    And the round is played to the end
    Then the server asks for 1 re-shake in round 1
    And the server voids round 1 under SH-4a
    And alice's bet on two_red is refund
    And alice's balance is 10,000

  @clause:SH-3 @clause:ERR-1 @clause:ERR-2
  Scenario: The server counts the re-shakes itself: past the cap it pauses with no report from the console, and the count starts again at the resume
    Given the table's reshake_count is since_resume
    And the table's max_reshakes is 3
    And in round 1 token 1 is left standing after shake 1
    And in round 1 token 1 is left standing after shake 2
    And in round 1 token 1 is left standing after shake 3
    And in round 1 token 1 is left standing after shake 4
    And in round 1 token 1 is left standing after shake 5
    And in round 1 token 1 is left standing after shake 6
    And in round 1 token 1 is left standing after shake 7
    And in round 1 token 1 is left standing after shake 8
    And in round 1 shake 9 lands r r w w
    And in round 1 the supervisor needs 0.3 s to clear the re-shake cap
    When round 1 opens
    And alice bets 2,000 on two_red
    And the console's problem reports of this round are lost
    And the round is played to the end
    Then the server asks for 8 re-shakes in round 1
    And the server pauses round 1 after its re-shakes 4 and 8
    And the server settles round 1 on r r w w
    And alice's bet on two_red returns 5,000
    And alice's balance is 13,000
    And the oracle finds no difference

  @clause:GP-3 @clause:EQ-3
  Scenario: The bowl is reported back on right after the reveal, before the reader's read reaches the server: the round settles on the read
    Given round 1 lands r r w r
    When round 1 opens
    And alice bets 1,000 on three_red
    And the reader's reads of this round reach the server only 0.2 seconds after it makes them
    And the bowl sensor reports the bowl put back on right after the lift
    And the round is played to the end
    Then the server settles round 1 on r r w r
    And alice's bet on three_red returns 3,800
    And alice's balance is 12,800
    And the oracle finds no difference

  # A reader that missed the server's restart still tags its read with the round the restart cancelled: that read
  # never decides the round in play.
  @clause:DEV-2 @clause:ERR-3
  Scenario: A result of a round the restart cancelled, arriving in the next round, never decides it
    Given round 2 lands w w w w
    When round 1 opens
    And alice bets 1,000 on big
    And the server is killed and restarted
    And the round is played to the end
    And round 2 opens
    And alice bets 1,000 on four_white
    And the reader sends a result r r r r tagged with round 1 as the bowl comes off
    And the round is played to the end
    Then the server cancels round 1 and refunds every bet
    And the server settles round 2 on w w w w
    And alice's bet on four_white returns 15,000
    And alice's balance is 24,000
    And the oracle finds no difference
