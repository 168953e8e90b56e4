"""The worked examples, one folder each, installed as the data package ``xocdia_hil_examples`` so that an installed
kit carries them: ``xocdia-hil examples`` lists them and ``xocdia-hil examples NAME --to DIR`` copies one out; read
the folder through :func:`harness.files.examples_folder`."""
