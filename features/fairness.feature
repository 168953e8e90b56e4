Feature: Fairness of the table's outcomes
  Labs certify the physical randomness on at least 10,000 outcomes and operators keep watching the table
  afterwards. The audit judges every fairness test together at 99 % (Holm's correction) and replays the live
  bias monitor over the recorded rounds; void and cancelled rounds are kept out of every statistic.

  @clause:EQ-3 @gli:3.4.2
  Scenario: A fair table passes and the monitor stays quiet
    Given an outcome file of 12000 rounds from tokens that show red with probability 0.5, seed 5
    When the outcome file is audited with plots
    Then every fairness test passes at 99 % after Holm's correction
    And the bias monitor raises no alarm
    And the audit plots are written

  @clause:EQ-3 @gli:3.3.3
  Scenario: A table biased one point towards red is caught within 10,000 rounds
    Given an outcome file of 10000 rounds from tokens that show red with probability 0.51, seed 5
    When the outcome file is audited with plots
    Then the bias monitor raises an alarm before round 10000, with the tokens favouring red
    And the audit fails

  @clause:SH-5 @clause:ERR-3 @gli:2.9.2
  Scenario: Void and cancelled rounds stay out of the statistics
    Given an outcome file of 12000 rounds from tokens that show red with probability 0.5, seed 6
    And every 25th round of the file is void
    When the outcome file is audited with plots
    Then 480 rounds are counted as void or cancelled and 11520 as settled
    And every fairness test passes at 99 % after Holm's correction

  @clause:EQ-3 @clause:SH-2 @clause:SH-3 @gli:3.4.2
  Scenario: The table model at standard pace, fair tokens, passes with its voids and re-shakes
    Given the standard table profile with tokens that show red with probability 0.5
    And the simulated table plays 12000 rounds with seed 3, writing its event log
    When the outcome file is audited with plots
    Then every fairness test passes at 99 % after Holm's correction
    And the bias monitor raises no alarm

  @clause:EQ-3 @gli:3.3.3
  Scenario: The table model with tokens biased one point towards red is caught
    # The monitor catches a one-point bias within 10,000 rounds for about 80 % of seeds (16 of seeds 1-20) and
    # within 20,000 rounds for all of them, so the scenario plays 20,000 rounds and does not depend on a lucky seed.
    Given the standard table profile with tokens that show red with probability 0.51
    And the simulated table plays 20000 rounds with seed 3, writing its event log
    When the outcome file is audited with plots
    Then the bias monitor raises an alarm before round 20000, with the tokens favouring red
    And the audit fails
