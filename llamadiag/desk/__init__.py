"""`llamadiag desk`: a small loopback web page and JSON API for a support desk.

The HTTP layer (app.py, guard.py) only checks requests and renders; service.py runs the
engine on pasted text, and adapter.py is the one place that reaches lookup and redaction.
Needs the optional `desk` extra: pip install 'llamadiag[desk]'.
"""
