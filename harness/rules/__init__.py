"""The published rules documents, audited: each document read through its reviewed reading
(:mod:`harness.rules.reading`, :mod:`harness.rules.document`), compared with the English and the English with the
certified rules (:mod:`harness.rules.compare`), the whole run and its allow-list (:mod:`harness.rules.audit`),
reported as text or JSON (:mod:`harness.rules.report`). Reads files and judges; never imports the game server.
"""
