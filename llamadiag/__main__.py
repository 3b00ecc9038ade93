from llamadiag.cli import app

app(prog_name="llamadiag")
