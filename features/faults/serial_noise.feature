Feature: Serial noise leads to a pause, never to a wrong settlement (fault injection)
  Frames on a device line are corrupted, lost, duplicated or reordered. The protocol's checks and
  retransmissions must absorb the noise, or the server must stop the round (pause, then cancel and refund);
  it must never settle a round on faces the table did not show. Runs on the in-process bench, whatever bench the
  suite runs on: that is where the bench owns the server's end of every line.

  @clause:ERR-1 @clause:ERR-3 @bench:in-process
  Scenario Outline: <kind> noise on the <device> line
    Given the in-process bench
    And a fault schedule of 4 rounds with 2 players betting 2 times a round
    And the <device> line gets <kind> noise at rate <rate> in round 2 while shaking for 3 s
    When the fault schedule runs with seed 5
    Then no checker reports a violation
    And the <device> line had <kind> noise on some frames
    And round 2 was paused or settled on the table's faces

    Examples:
      | device | kind      | rate |
      | reader | flip      | 0.5  |
      | reader | drop      | 1.0  |
      | reader | duplicate | 0.5  |
      | reader | reorder   | 0.5  |
      | shaker | flip      | 0.5  |
      | bowl   | drop      | 0.5  |
      | lamp   | duplicate | 0.5  |
