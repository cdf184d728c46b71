"""letterbox-tui: a terminal mail client and core library for agent-letterbox correspondence."""

__version__ = "0.1.0"
