Feature: No bet is lost across a server restart, in every phase of a round (fault injection)
  The game server is killed with SIGKILL (in-process: its engine is dropped, only the committed ledger
  survives) and restarted on the same ledger while players bet. Every bet the server acknowledged must be
  settled or refunded exactly once, balances must add up, and the round the restart interrupted is cancelled
  and refunded (the restart policy) or, if it had already ended, left as it was.

  @clause:ERR-3 @clause:DC-2 @clause:DC-3
  Scenario Outline: The server is killed while <phase> and restarted
    Given a fault schedule of 3 rounds with 3 players betting 2 times a round
    And the server is killed in round 2 while <phase> and restarted after 0.5 s
    When the fault schedule runs with seed 7
    Then no checker reports a violation
    And every round was played
    And the server was restarted 1 times
    And every acknowledged bet was settled or refunded exactly once

    Examples:
      | phase          |
      | betting_open   |
      | shaking        |
      | betting_closed |
      | reveal         |
      | settling       |
