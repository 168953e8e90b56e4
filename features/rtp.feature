Feature: Return to player, computed from the rules
  The harness states the payouts from RULES.md on its own and computes the game's mathematics by enumerating
  the 16 token patterns with exact fractions. A displayed RTP says how it was computed: pushes (Big and Small
  on two reds) count as returns; counted per decided bet the figure is lower.

  @clause:RTP-1 @gli:4.7.2
  Scenario: The maximum return to player is 98.75 % on Big and Small
    Given fair tokens
    When the exact mathematics is computed
    Then the highest RTP is 98.75 % on big and small
    And big returns 98.0 % per decided bet

  @clause:RTP-1
  Scenario Outline: Every bet's return with fair tokens
    Given fair tokens
    When the exact mathematics is computed
    Then <bet> returns <percent> %

    Examples:
      | bet            | percent |
      | four_red       | 93.75   |
      | three_red      | 95.0    |
      | two_red        | 93.75   |
      | one_red        | 95.0    |
      | four_white     | 93.75   |
      | four_of_a_kind | 93.75   |
      | odd            | 98.0    |
      | even           | 98.0    |
      | big            | 98.75   |
      | small          | 98.75   |

  @clause:RTP-1
  Scenario: Half a point of token bias gives players the edge on Big
    Given tokens that show red with probability 0.505
    When the exact mathematics is computed
    Then big returns more than 100 %
    And small returns less than 98.75 %

  @clause:RTP-1
  Scenario: Ten million simulated rounds agree with the exact figures
    Given fair tokens
    When 10000000 rounds are simulated with seed 7
    Then every bet's measured RTP is within 4.5 standard errors of its exact RTP
