"""The shipped certification suite (Gherkin ``.feature`` files), installed as the data package
``xocdia_hil_features``; found through :mod:`harness.files`."""
