"""Mutation testing of the reference server's rules and settlement code, with the certification suite as the only
killer (``make mutate``; docs/mutation.md).

- :mod:`mutation.run`: the command line; copies the working tree, makes the mutants with cosmic-ray, runs the suite
  on each, writes the report.
- :mod:`mutation.mutants`: what a mutant is here: its stable key, its diff, whether it sits in a type annotation.
- :mod:`mutation.equivalents`: the committed list of equivalent mutants (``mutation/equivalents.yaml``).
- :mod:`mutation.report`: the JSON and Markdown report and the score.

Not shipped in the wheel: it tests this repository's reference server, not a lab's.
"""
