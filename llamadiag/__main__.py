from llamadiag.cli.entry import main

main(prog_name="llamadiag")
