"""Fault injection: schedules, the injector, history and checkers, shrinking and campaigns (docs/faults.md)."""
