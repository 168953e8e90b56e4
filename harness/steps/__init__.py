"""Step definitions for the pytest-bdd feature bindings, one module per area, loaded via ``pytest_plugins``."""
