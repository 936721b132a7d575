from __future__ import annotations

import pandas as pd
import pytest

from ragkit.app.demo import DEMO_SEARCHES, rescue


def frame(rows):
    df = pd.DataFrame(rows, columns=["chunk_id", "lexical_rank", "dense_rank", "fused_rank", "final_rank",
                                     "delivered"])
    for col in ("lexical_rank", "dense_rank", "fused_rank", "final_rank"):
        df[col] = df[col].astype("Int64")
    return df


def test_rescue_reads_ranks_from_the_trace():
    df = frame([("a#x~0", 1, None, 3, 1, True), ("b#y~0", 9, 2, 1, 2, True)])
    assert rescue(df, "bm25_rescue", "a#x").endswith("rescued by BM25: yes")
    assert "dense rank absent" in rescue(df, "bm25_rescue", "a#x")
    assert rescue(df, "dense_rescue", "a#x").endswith("rescued by dense retrieval: no")
    assert rescue(df, "dense_rescue", "b#y").endswith("rescued by dense retrieval: yes")
    assert "no rescue" in rescue(df, "dense_rescue", "zzz")


def test_demo_lessons_name_their_target():
    lessons = [d for d in DEMO_SEARCHES if d.lesson]
    assert {d.lesson for d in lessons} == {"bm25_rescue", "dense_rescue"}
    assert all(d.target for d in lessons)


@pytest.mark.slow
def test_demo_rescues_happen_on_the_course_index():
    """Every rescue the demo announces in its titles happens on the bundled corpus: the named
    section is ranked by one retriever only (or far better by it), and is delivered."""
    from ragkit import Funnel, Scope
    from ragkit.core import Filters
    from ragkit.course import course_index

    funnel = Funnel(course_index())
    for demo in (d for d in DEMO_SEARCHES if d.lesson):
        result = funnel.search(demo.query, scope=Scope(demo.tenant, demo.groups),
                               filters=Filters.make(valid_at=demo.valid_at))
        line = rescue(result.to_frame(), demo.lesson, demo.target)
        assert line.endswith(": yes"), f"{demo.title}: {line}"
