"""Links between documents, read in both directions: who links to a document, what replaces it.

An envelope names the documents it links to (``links``), the ones it replaces
(``supersedes``) and the ones that replace it (``superseded_by``). A reader following a
document needs the other direction too: the documents that link *to* it, and the
supersession named on either side. :class:`LinkGraph` inverts the envelopes of one index
version once; :meth:`LinkGraph.links` answers for one document with a :class:`DocumentLinks`.

Example:
    >>> from ragkit.core.records import Document, Envelope
    >>> docs = {"a": Document(Envelope("a", links=("b",)), ""),
    ...         "b": Document(Envelope("b", supersedes=("c",)), ""),
    ...         "c": Document(Envelope("c"), "")}
    >>> graph = LinkGraph(docs)
    >>> graph.links("b")
    DocumentLinks(doc_id='b', linked_from=('a',), supersedes=('c',), superseded_by=())
    >>> graph.links("c").superseded_by
    ('b',)
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from ragkit.core.records import Document

__all__ = ["DocumentLinks", "LinkGraph"]


@dataclass(frozen=True)
class DocumentLinks:
    """The direct neighbours of one document, named on either side (no scope applied).

    Attributes:
        doc_id: the document.
        linked_from: documents whose envelope links to it, in index order (itself if it links to itself).
        supersedes: documents it replaces: its own ``supersedes``, then documents naming it in
            their ``superseded_by``, merged in index order, without repeats.
        superseded_by: documents that replace it, named on either side, in the same order rule.
    """

    doc_id: str
    linked_from: tuple[str, ...] = ()
    supersedes: tuple[str, ...] = ()
    superseded_by: tuple[str, ...] = ()


class LinkGraph:
    """Inverse link and supersession maps of one index version.

    Args:
        documents: the index's documents, ``doc_id -> Document`` in index order.
    """

    def __init__(self, documents: Mapping[str, Document]):
        self.linked_from: dict[str, list[str]] = {}
        self.newer: dict[str, list[str]] = {}   # doc -> docs that supersede it
        self.older: dict[str, list[str]] = {}   # doc -> docs it supersedes
        for doc_id, doc in documents.items():
            env = doc.envelope
            for target in env.links:
                self.linked_from.setdefault(target, []).append(doc_id)
            for old in env.supersedes:
                _add(self.older, doc_id, old)
                _add(self.newer, old, doc_id)
            for new in env.superseded_by:
                _add(self.newer, doc_id, new)
                _add(self.older, new, doc_id)

    def links(self, doc_id: str) -> DocumentLinks:
        """The neighbours of ``doc_id`` (empty tuples for an unknown id)."""
        return DocumentLinks(doc_id, tuple(self.linked_from.get(doc_id, ())),
                             tuple(self.older.get(doc_id, ())), tuple(self.newer.get(doc_id, ())))


def _add(table: dict[str, list[str]], key: str, value: str) -> None:
    values = table.setdefault(key, [])
    if value not in values:
        values.append(value)
