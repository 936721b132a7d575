"""The command line, the demo and terminal display."""
