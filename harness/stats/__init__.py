"""Statistical certification: exact game mathematics, measured RTP, simulation, fairness tests, live monitor.

See ``docs/statistics.md`` for the methods, the CSV formats read and the monitor's detection and false-alarm rates.
"""
