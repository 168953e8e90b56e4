"""The reference Xoc Dia game server: round engine, SQLite ledger, HTTP/WebSocket API and device gateway.

This package imports only its own modules and third-party packages (never ``simulator`` or ``harness``): its
paytable is written independently from ``RULES.md`` so the harness's oracle can check it.
"""
