Feature: The result camera's confidence in each token (EQ-3, ERR-1)
  The result reader is a camera that says how sure it is of each token it reads. The reader's line has a minimum
  confidence (the xocdia-jsonl option min_confidence): a token read with less is unreadable (U), and a read with an
  unreadable token and no overlap cannot settle the round, so the round pauses (ERR-1) until a read the server can
  trust arrives. A token read at the minimum or above it counts as the camera saw it (EQ-3). Each scenario fails on a
  server that misplaces the threshold (checked against the reference server with the threshold's comparison planted
  as "at or below", and with the threshold misread). Not applicable on a bench whose reader's line carries no
  confidence (xocdia-ascii, xocdia-bus) or names no minimum confidence.

  Background:
    Given player alice has a balance of 10,000

  @clause:ERR-1 @clause:ERR-2
  Scenario: A token read just below the reader line's minimum confidence is unreadable: the round pauses
    Given round 1 lands r r w w
    When round 1 opens
    And alice bets 1,000 on two_red
    And the camera reads token 2 of this round with a confidence just below the reader line's minimum
    And the server pauses round 1
    And 0.2 seconds pass
    And the supervisor resumes the round
    And the reader reads the tokens of this round again
    And the round is played to the end
    Then the server settles round 1 on r r w w
    And alice's bet on two_red returns 2,500
    And the oracle finds no difference

  @clause:EQ-3 @clause:ERR-1
  Scenario: A token read at the reader line's minimum confidence counts as the camera saw it
    Given round 1 lands r r w w
    When round 1 opens
    And alice bets 1,000 on two_red
    And the camera reads token 2 of this round with a confidence at the reader line's minimum
    And the round is played to the end
    Then the server settles round 1 on r r w w
    And alice's bet on two_red returns 2,500
    And alice's balance is 11,500
    And the oracle finds no difference

  @clause:EQ-3 @clause:ERR-1
  Scenario: A token read just above the reader line's minimum confidence counts as the camera saw it
    Given round 1 lands r w r w
    When round 1 opens
    And alice bets 1,000 on two_red
    And the camera reads token 0 of this round with a confidence just above the reader line's minimum
    And the round is played to the end
    Then the server settles round 1 on r w r w
    And alice's bet on two_red returns 2,500
    And alice's balance is 11,500
    And the oracle finds no difference

  @clause:EQ-3 @clause:ERR-1
  Scenario: Tokens read unsure but above the minimum settle the round on what the camera saw
    Given round 1 lands w r r r
    When round 1 opens
    And alice bets 1,000 on two_red
    And the camera reads token 1 of this round with confidence 0.99
    And the camera reads token 3 of this round with a confidence just above the reader line's minimum
    And the round is played to the end
    Then the server settles round 1 on w r r r
    And alice's bet on two_red returns 0
    And alice's balance is 9,000
    And the oracle finds no difference
