"""``python -m ragkit``: the command line (see :mod:`ragkit.app.cli`)."""

from ragkit.app.cli import main

main()
