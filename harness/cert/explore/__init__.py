"""Generative certification: random whole tables played on the bench with the shipped steps, judged by the whole
judge; a failure is shrunk (Hypothesis) to a minimal scenario, written as a ``.feature`` file that replays it
(docs/explore.md)."""
