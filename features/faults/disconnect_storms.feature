Feature: Disconnect storms (fault injection)
  Every player loses the connection in every round, replies are lost to connection resets and requests vanish
  into a blackhole. A bet the player never sent must not appear; a bet whose reply was lost may be absent but,
  if present, is resolved exactly once; nothing acknowledged is lost.

  @clause:DC-1 @clause:DC-2 @clause:DC-3 @clause:NET-1
  Scenario: Everyone drops every round while the dealer shakes
    Given a fault schedule of 6 rounds with 4 players betting 3 times a round
    And every player disconnects in every round while shaking for 0.4 s
    And p1's connection is reset in every round while betting_open for 0.3 s
    And p2's link is a blackhole in every round while betting_open for 0.3 s
    When the fault schedule runs with seed 3
    Then no checker reports a violation
    And every round was played
    And some bets were refused because the player was offline
    And some bets had an unknown outcome
    And every acknowledged bet was settled or refunded exactly once
