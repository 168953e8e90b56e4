"""Statistical certification: exact game mathematics, measured RTP, simulation, the family of fairness tests
judged in one error budget, the live monitor, and the verdict in words (PASS / FAIL / INSUFFICIENT).

See ``docs/statistics.md`` for the methods, the CSV formats read, the calibration of the verdict and the power
against each kind of defect.
"""
