"""Reporting: the clause matrix (:mod:`harness.report.clauses`), the allure matrix result and the HTML fallback
(:mod:`harness.report.html`), and the offline report build (:mod:`harness.report.build`)."""
