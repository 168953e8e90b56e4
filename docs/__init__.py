"""The user documentation, installed as the data package ``xocdia_hil_docs`` so that an installed kit carries it:
``xocdia-hil docs [TOPIC]`` prints a page; read the folder through :data:`harness.files.DOCS`."""
