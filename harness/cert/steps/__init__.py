"""Step definitions for the pytest-bdd bindings, one module per area, loaded via ``pytest_plugins``."""
