"""Reporting: the clause matrix (:mod:`harness.cert.report.clauses`), the allure matrix result and the HTML fallback
(:mod:`harness.cert.report.html`), and the offline report build (:mod:`harness.cert.report.build`)."""
