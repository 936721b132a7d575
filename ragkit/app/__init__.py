"""The command line, the demo and terminal display (the top layer).

* :mod:`ragkit.app.cli`: the ``ragkit`` command line (one Typer app), its commands by group in
  :mod:`~ragkit.app.index_commands`, :mod:`~ragkit.app.search_commands` and
  :mod:`~ragkit.app.eval_commands`, and how they fail in :mod:`~ragkit.app.exits`;
* :mod:`ragkit.app.demo`: ``ragkit demo``, the course's key searches traced;
* :mod:`ragkit.app.display`: search results on a terminal and as JSON.

This file imports none of them, so ``python -m ragkit.app.cli`` runs the module once.
"""
