"""pytest-bdd bindings for ``features/``.

Step definitions, the ``bench``/``cert`` fixtures, tag handling, evidence and the clause matrix come from the
xocdia pytest plugin (``harness/cert/plugin.py``, entry point ``pytest11``), which registers the step modules
of ``harness/cert/steps/`` as plugins: pytest-bdd 9 finds steps only in conftests and plugins.
"""
