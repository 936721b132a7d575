"""Showing search results on a terminal and as JSON.

:func:`print_result` prints delivered hits with their citations and envelopes and a
table of every candidate's rank per funnel stage (with ``rich``); :func:`hit_json`
and :func:`json_default` turn hits and trace values into plain JSON.
"""

from __future__ import annotations

from typing import Any

from ragkit.search.funnel import Hit, SearchResult

__all__ = ["print_result", "hit_json", "json_default"]


def print_result(result: SearchResult, *, show_trace: bool = True, width: int = 12) -> None:
    """Print delivered hits with citations and a per-stage rank table (rich)."""
    from rich.console import Console
    from rich.table import Table

    console = Console(width=160)
    trace = result.trace
    console.print(f"[bold]query[/bold] {result.query!r}  [dim]scope: {trace.scope}; filters: "
                  f"{trace.filters}; {trace.rows_in_scope}/{trace.rows_total} chunks in scope[/dim]")
    if not result.hits:
        console.print("  no results: nothing in scope matched; widen the filters or rephrase")
        return
    for h in result.hits:
        env = h.envelope
        date = (env.effective_from or env.published_at)
        console.print(f"  [{h.rank}] [cyan]{h.citation}[/cyan]  {env.source_type}, tenant={env.tenant}, "
                      f"v{env.version}, {date.date() if date else 'undated'}, validity={h.validity}")
        snippet = " ".join(h.text.split())[:220]
        console.print(f"      {snippet}", markup=False)
    if not show_trace:
        return
    table = Table(title="funnel trace (ranks per stage; - = not in that list)", title_justify="left")
    for col in ("chunk", "bm25", "dense", "fused", "rerank", "final", "delivered"):
        table.add_column(col, justify="left" if col == "chunk" else "right")
    frame = trace.to_frame().head(width)

    def cell(v: Any) -> str:
        return "-" if v is None or str(v) == "<NA>" else str(v)

    for _, row in frame.iterrows():
        table.add_row(row.chunk_id, cell(row.lexical_rank), cell(row.dense_rank), cell(row.fused_rank),
                      cell(row.rerank_rank), cell(row.final_rank), "yes" if row.delivered else "")
    console.print(table)
    ms = ", ".join(f"{k} {v:.0f} ms" for k, v in trace.timings_ms.items())
    console.print(f"  [dim]timings: {ms}; tokens: {trace.tokens}[/dim]")


def hit_json(h: Hit) -> dict[str, Any]:
    """One delivered :class:`~ragkit.search.funnel.Hit` as a JSON-ready dict."""
    return {"rank": h.rank, "citation": h.citation, "chunk_id": h.chunk_id, "doc_id": h.doc_id,
            "score": h.score, "text": h.text, "section_id": h.section_id, "section_text": h.section_text,
            "truncated": h.truncated, "tokens": h.tokens, "validity": h.validity,
            "envelope": h.envelope.to_mapping()}


def json_default(value: Any) -> Any:
    """``json.dumps(default=...)`` for numpy scalars and pandas NA."""
    try:
        import pandas as pd

        if value is pd.NA:
            return None
    except ImportError:  # pragma: no cover
        pass
    if hasattr(value, "item"):
        return value.item()
    return str(value)
