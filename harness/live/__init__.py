"""The live page: the bench event feed served to a browser while a command runs (``--live``), or replayed from
a recorded feed file (``xocdia-hil replay``): the server (``server.py``), the command options and their session
(``session.py``), and the static page (``static/``: HTML, vanilla JavaScript and CSS, no external resources)."""
