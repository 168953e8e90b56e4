"""Certification: the step library (:mod:`harness.cert.steps`), the ``xocdia`` pytest plugin
(:mod:`harness.cert.plugin`) and the report with its clause matrix (:mod:`harness.cert.report`)."""
