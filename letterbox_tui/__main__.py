from letterbox_tui.cli import run

run()
