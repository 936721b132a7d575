"""The profile command: ``ragkit profile DIR [--json] [--out FILE]``.

Loads a folder with the normal loaders (:func:`ragkit.documents.load_corpus`), derives its
:class:`ragkit.text.CorpusProfile` (:func:`ragkit.text.derive_profile`) and prints it: a table
of the corpus-specific fields (with ``rich``), or the whole profile as JSON with ``--json``.
``--out FILE`` also writes the JSON to a file, which :func:`ragkit.text.load_profile` reads back
(edit it to override what was derived). Registered in :mod:`ragkit.app.cli`.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from ragkit.app.exits import err, fail
from ragkit.core.errors import RagkitError
from ragkit.documents.loaders import load_corpus
from ragkit.text.profile import CorpusProfile
from ragkit.text.profile_derive import derive_profile

__all__ = ["profile_cmd", "profile_rows"]

#: The fields the table shows (the cue lists, the same for every derived profile, are left out).
_SHOWN = ("source_types", "authority_ranks", "source_roles", "statuses", "currencies", "id_shape_patterns",
          "identifier_examples", "frame_words", "contradiction_terms", "contradiction_rounds")


def profile_rows(profile: CorpusProfile) -> list[tuple[str, str]]:
    """``(field, value)`` rows of the corpus-specific fields of ``profile``, as short text."""
    data = profile.to_dict()
    rows = []
    for name in _SHOWN:
        value = data[name]
        if isinstance(value, dict):
            text = ", ".join(f"{k}: {' '.join(map(str, v)) if isinstance(v, list) else v}"
                             for k, v in value.items())
        elif name == "id_shape_patterns":
            text = "\n".join(f"{shape}: {pattern}" for shape, pattern in value)
        elif value and isinstance(value[0], list):
            text = " | ".join(" ".join(group) for group in value)
        else:
            text = ", ".join(map(str, value))
        rows.append((name, text or "(none found)"))
    return rows


def profile_cmd(
    folder: Annotated[Path, typer.Argument(help="folder (or file) of .md/.txt/.html/.py/.jsonl/.pdf")],
    as_json: Annotated[bool, typer.Option("--json", help="print the whole profile as JSON")] = False,
    out: Annotated[Path | None, typer.Option("--out", "-o", help="also write the profile (JSON)")] = None,
    frame_share: Annotated[float, typer.Option(help="a word in this share of documents frames")] = 0.5,
    min_ids: Annotated[int, typer.Option(help="an identifier shape must occur this often")] = 2,
) -> None:
    """Derive the corpus profile of FOLDER: source types, authorities, statuses, identifier shapes..."""
    try:
        if not folder.exists():
            raise ValueError(f"{folder} does not exist; give a folder or file of documents")
        if not 0 < frame_share <= 1:
            raise ValueError(f"--frame-share must be in (0, 1], got {frame_share}")
        documents, report = load_corpus(folder)
        if not documents:
            raise ValueError(f"no documents could be read under {folder}")
        profile = derive_profile(documents, name=str(folder), frame_share=frame_share,
                                 min_ids=max(1, min_ids))
    except (RagkitError, ValueError) as exc:
        fail(exc)
    for skipped in report.skipped:
        err(f"skipped {skipped}")
    if out is not None:
        out.write_text(profile.to_json(), encoding="utf-8")
        err(f"wrote {out}")
    if as_json:
        sys.stdout.write(profile.to_json())
        return
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    table = Table(title=f"corpus profile of {folder} ({len(documents)} documents)", title_justify="left")
    table.add_column("field", style="bold")
    table.add_column("derived value", overflow="fold")
    for name, text in profile_rows(profile):
        table.add_row(name, Text(text))  # Text: regexes hold [brackets] that are not markup
    Console(width=140).print(table)
