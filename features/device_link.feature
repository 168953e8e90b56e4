Feature: The device link's own faults, in every dialect: damaged checks, lost acknowledgements, silence, the sequence wrap, a reconnect
  The dialogue between the table's devices and the server must absorb what a real line does to it: a frame whose
  check the line damaged is refused and its copy sent again taken once, a report sent again because its
  acknowledgement was lost is acted on once, a line that goes quiet without an error is counted down within the
  server's silence limit and the round paused, and a report numbered just after the sequence numbers wrap is a new
  report, never a replay, and a report a device sends again after its connection dropped before the report's
  acknowledgement is taken once. Each fault is made by the bench's own device end, in the line's dialect (its
  capabilities CheckFlipping, AckLosing, Renumbering and Redialing, harness/wire/dialects/capabilities.py; a silent
  line by the forge); a scenario whose fault the line's end cannot make, whose dialect has no integrity check, or
  whose dialect does not send a report again after a reconnect (resend_after_reconnect), is not applicable there.

  Background:
    Given player alice has a balance of 10,000

  # EQ-3: the outcome is the faces the reader saw. A frame whose check fails may say anything: the server refuses it
  # and settles on the copy whose check holds.
  @clause:EQ-3 @clause:GP-3
  Scenario: A read whose check the line damaged is refused; its copy sent again settles the round
    Given round 1 lands r w w r
    When round 1 opens
    And alice bets 1,000 on two_red
    And the reader's next report goes out with one bit of its check flipped
    And the round is played to the end
    Then the server refused the damaged reader report and took it when sent again
    And the server settles round 1 on r w w r
    And alice's bet on two_red returns 2,500
    And the oracle finds no difference

  # SH-2: one drop is one re-shake. A drop report sent again because its acknowledgement was lost is the same drop.
  @clause:SH-2
  Scenario: A drop report sent again after its acknowledgement was lost is one drop: one re-shake
    Given in round 1 the bowl drops during shake 1
    And in round 1 shake 2 lands w w r r
    When round 1 opens
    And alice bets 1,000 on two_red
    And the acknowledgement of the shaker's next drop report is lost
    And the round is played to the end
    Then the shaker sent its drop report again and it was taken
    And the server asks for 1 re-shake in round 1
    And the server settles round 1 on w w r r
    And alice's bet on two_red returns 2,500
    And the oracle finds no difference

  # GP-3: each round's bets are settled on the outcome its lift reveals. A read numbered after the wrap of the
  # sequence numbers is that round's read, not a replay of an earlier one; a server that drops it waits for a read it
  # already had and pauses a round that had no problem (ERR-1: a pause needs a cause).
  @clause:GP-3 @clause:EQ-3 @clause:ERR-1
  Scenario: The reader's numbering wraps between two rounds: the read after the wrap settles its round
    Given round 1 lands r r r r
    And round 2 lands w r w w
    When round 1 opens
    And alice bets 1,000 on four_red
    And the reader's next report is numbered last before its numbering wraps
    And the round is played to the end
    And round 2 opens
    And alice bets 1,000 on one_red
    And the round is played to the end
    Then the server settles round 1 on r r r r
    And the server settles round 2 on w r w w
    And alice's bet on one_red returns 3,800
    And alice's balance is 26,800
    And the oracle finds no difference

  # SH-3: one standing token is one re-shake. The reader's read of it, sent again after its connection dropped
  # before the read's acknowledgement came, is the same read: taken again after the re-shake's lift, it would ask for a
  # second re-shake with no token standing and settle the round on faces no lift revealed.
  @clause:SH-3 @clause:GP-3
  Scenario: The reader's connection drops before its read is acknowledged: the read it sends again on reconnecting is taken once
    Given in round 1 token 2 is left standing after shake 1
    And in round 1 shake 2 lands w w r r
    When round 1 opens
    And alice bets 1,000 on two_red
    And the reader's connection drops before its next result report is acknowledged, until it has another
    And the round is played to the end
    Then the reader sent its result report again on its new connection and it was acknowledged
    And the server asks for 1 re-shake in round 1
    And the server settles round 1 on w w r r
    And alice's bet on two_red returns 2,500
    And the oracle finds no difference

  # ERR-1: a line gone quiet is a problem of the system the server learns of only by its silence limit; it then
  # pauses the round, and, the line never coming back, cancels it and refunds every bet (ERR-3).
  @clause:ERR-1 @clause:ERR-3
  Scenario Outline: The reader line goes silent <phase>: counted down within the silence limit, the round paused and cancelled
    Given round 1 lands r r w w
    When round 1 opens
    And alice bets 1,000 on two_red
    And the reader line goes silent <phase>
    And the round is played to the end
    Then the server paused round 1 within its silence limit of the line going silent
    And the server cancels round 1 and refunds every bet
    And alice's balance is 10,000
    And the oracle finds no difference

    Examples:
      | phase                   |
      | while the dealer shakes |
      | after the close         |
      | at the read             |
