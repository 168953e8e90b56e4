@gli:4.16
Feature: Random tables judged by the whole judge (generative certification)
  Hypothesis draws whole tables from the shipped steps: rounds with any mix of incidents, pauses, cancels, server
  kills and crashes inside the ledger's writes, disconnects, lost, late and repeated device reports, bets at the
  edges of the betting period, retries. The whole judge decides every table, and a failing table is shrunk to a
  minimal scenario written into the report folder (explored/), with the command that replays it.
  `certify --explore N --seed S` plays N tables from seed S instead of the count and seed below.

  # One clause tag, so that a tag filter for a clause runs its own scenarios, not a whole exploration: what the
  # exploration covers is counted from the checks its tables ran, whatever the tag.
  @clause:GP-3
  Scenario: Random tables with every kind of incident are played and judged
    When 30 random tables are played from seed 1
    Then no explored table fails the judge
