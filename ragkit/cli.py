"""``python -m ragkit.cli``: the command line (its code lives in :mod:`ragkit.app.cli`)."""

from ragkit.app.cli import app, main

__all__ = ["app"]

if __name__ == "__main__":
    main()
