Feature: The rules documents (DOC-1, DOC-2)

  @clause:DOC-1
  Scenario: The English rules prevail: the harness settles with the English paytable
    Then the paytable follows the English rules document

  @clause:DOC-2
  Scenario Outline: Amounts are shown in US format
    Then <minor> minor units are shown as <text>

    Examples:
      | minor     | text         |
      | 123400    | 1,234.00     |
      | 5         | 0.05         |
      | 100000000 | 1,000,000.00 |
