@gli:4.16
Feature: Unexpected problems (ERR-1..ERR-3)
  On an unexpected problem the round is paused while the supervisor is informed; resolved quickly, it resumes;
  otherwise it is cancelled and every bet refunded. What the table does while the round is paused (the dealer
  finishing a shake) still counts when the round resumes.

  Background:
    Given player alice has a balance of 10,000

  @clause:ERR-1 @clause:ERR-2
  Scenario: The supervisor pauses the round and resumes it: the round goes on as usual
    Given round 1 lands r r w w
    When round 1 opens
    And alice bets 1,000 on two_red
    And the dealer has finished shaking
    And the supervisor pauses the round
    And alice tries to bet 1,000 on big
    And 0.2 seconds pass
    And the supervisor resumes the round
    And the round is played to the end
    Then alice's bet is rejected with round_paused
    And the server settles round 1 on r r w w
    And alice's bet on two_red returns 2,500
    And alice's bet record shows 1 bet
    And the oracle finds no difference

  @clause:ERR-1 @clause:ERR-2 @clause:GP-2
  Scenario: A shake made while the round is paused still counts after the resume
    Given the table's shakes_during_pause is count
    And round 1 lands r w w w
    When round 1 opens
    And alice bets 1,000 on one_red
    And the supervisor pauses the round
    And the dealer has finished shaking
    And 0.2 seconds pass
    And the supervisor resumes the round
    And the round is played to the end
    Then the server settles round 1 on r w w w
    And alice's bet on one_red returns 3,800
    And the oracle finds no difference

  @clause:ERR-1 @clause:ERR-3
  Scenario: The supervisor pauses the round and cannot resolve it: the round is cancelled and refunded
    When round 1 opens
    And alice bets 1,000 on big
    And alice bets 500 on four_red
    And the supervisor pauses the round
    And the supervisor cancels the round
    And the round is played to the end
    Then the server cancels round 1 and refunds every bet
    And alice's balance is 10,000
    And the oracle finds no difference

  @clause:ERR-1 @clause:ERR-2
  Scenario: A problem at the table is resolved quickly: the round resumes and settles
    Given round 1 lands w r w r
    And in round 1 a problem stops the table after 0.7 s and is solved after 0.3 s
    When round 1 opens
    And alice bets 1,000 on two_red
    And the round is played to the end
    Then the server settles round 1 on w r w r
    And alice's bet on two_red returns 2,500
    And the oracle finds no difference

  @clause:ERR-1 @clause:ERR-3
  Scenario: A problem at the table just after betting closes: the bowl stays on, the round is cancelled and refunded
    Given round 1 lands r r w w
    And in round 1 a problem stops the table after 1.03 s and outlasts the pause timeout
    When round 1 opens
    And alice bets 1,000 on two_red
    And the round is played to the end
    Then the server cancels round 1 and refunds every bet
    And alice's balance is 10,000
    And the oracle finds no difference

  @clause:ERR-1 @clause:ERR-3
  Scenario: A problem at the table outlasts the pause limit: the round is cancelled and refunded
    Given in round 1 a problem stops the table after 0.1 s and outlasts the pause timeout
    When round 1 opens
    And alice bets 1,000 on odd
    And the round is played to the end
    Then the server cancels round 1 and refunds every bet
    And alice's balance is 10,000
    And the oracle finds no difference

  @clause:ERR-1 @clause:ERR-2
  Scenario: A pause during betting keeps the betting time that was left: bets are taken for that long after the resume
    Given round 1 lands r r r w
    When round 1 opens
    And alice bets 1,000 on two_red
    And 0.4 seconds pass
    And the supervisor pauses the round
    And 0.8 seconds pass
    And the supervisor resumes the round
    And the round's first close is 0.5 seconds past
    And alice bets 1,000 on three_red
    And betting closes
    And alice tries to bet 1,000 on big
    And the round is played to the end
    Then alice's bet is refused
    And the server settles round 1 on r r r w
    And alice's bet on two_red is lose
    And alice's bet on three_red returns 3,800
    And alice's bet record shows 2 bets
    And the oracle finds no difference

  @clause:ERR-1 @clause:ERR-2
  Scenario: A round paused for want of a result gets the whole time to reveal again when it resumes
    Given the table's result_timeout_s is at most 5
    And round 1 lands w r r w
    When round 1 opens
    And alice bets 1,000 on two_red
    And the reader's read of this round is lost
    And the server pauses round 1
    And 0.5 seconds pass
    And the supervisor resumes the round
    And 0.2 seconds pass
    And the reader reads the tokens of this round again
    And the round is played to the end
    Then the server settles round 1 on w r r w
    And alice's bet on two_red returns 2,500
    And the oracle finds no difference

  @clause:ERR-1 @clause:SH-3
  Scenario: Each re-shake gives the table the whole time to reveal again, counted from the re-shake
    Given the table's result_timeout_s is at least 5
    And the table's max_reshakes is at least 3
    And in round 1 token 0 is left standing after shake 1
    And in round 1 token 1 is left standing after shake 2
    And in round 1 token 2 is left standing after shake 3
    And in round 1 shake 4 lands w r r w
    When round 1 opens
    And alice bets 1,000 on two_red
    And the reader's deciding read of this round is lost
    And betting closes
    And 5.2 seconds pass
    And the reader reads the tokens of this round again
    And the round is played to the end
    Then the server asks for 3 re-shakes in round 1
    And the server settles round 1 on w r r w
    And alice's bet on two_red returns 2,500
    And the oracle finds no difference

  @clause:ERR-1 @clause:GP-3
  Scenario: A read that reaches the server within its time to reveal settles the round without a pause
    Given the table's result_timeout_s is at least 5
    And round 1 lands r w r w
    When round 1 opens
    And alice bets 1,000 on two_red
    And the reader's read of this round is lost
    And the round's first close is 4.5 seconds past
    And the reader reads the tokens of this round again
    And the round is played to the end
    Then the server settles round 1 on r w r w
    And alice's bet on two_red returns 2,500
    And alice's balance is 11,500
    And the oracle finds no difference

  @clause:ERR-1 @clause:ERR-2
  Scenario: A pause early in betting gives back nearly all of it: a bet well after the first close is taken
    Given round 1 lands r r r w
    When round 1 opens
    And 0.1 seconds pass
    And the supervisor pauses the round
    And 0.8 seconds pass
    And the supervisor resumes the round
    And the round's first close is 0.5 seconds past
    And alice bets 1,000 on three_red
    And the round is played to the end
    Then the server settles round 1 on r r r w
    And alice's bet on three_red returns 3,800
    And alice's balance is 12,800
    And the oracle finds no difference

  # A round's betting period does not depend on an earlier round's pauses: round 2 takes bets for its whole period.
  @clause:ERR-2 @clause:GP-3
  Scenario: A pause in round 1 takes nothing off round 2's betting period
    Given round 1 lands r r w w
    And round 2 lands r r r w
    When round 1 opens
    And alice bets 1,000 on two_red
    And 0.4 seconds pass
    And the supervisor pauses the round
    And 0.8 seconds pass
    And the supervisor resumes the round
    And the round is played to the end
    And round 2 opens
    And alice tries to bet 1,000 on big 50 ms before betting closes
    And the round is played to the end
    Then alice's bet record shows 2 bets
    And alice's balance is 12,460
    And the oracle finds no difference

  # A pause for want of a result that nobody resolves ends in a cancellation, even when a read reaches the server
  # while the round stands paused: the held read never settles the round.
  @clause:ERR-3 @clause:REF-1
  Scenario: A result pause that is not resolved is cancelled even when the read arrives during the pause
    Given the table's result_timeout_s is at most 5
    And round 1 lands w r r w
    When round 1 opens
    And alice bets 1,000 on two_red
    And the reader's read of this round is lost
    And the server pauses round 1
    And 0.2 seconds pass
    And the reader reads the tokens of this round again
    And the round is played to the end
    Then the server cancels round 1 and refunds every bet
    And alice's balance is 10,000
    And the oracle finds no difference
