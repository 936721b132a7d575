"""Where the Milvus backend lives: a server URI and token, or a local file, and the collection names.

:class:`MilvusConfig` names a Milvus standalone or distributed cluster (``http://host:19530``
and a token) or a local file path (``./ragkit.db``) for the embedded engine;
:meth:`MilvusConfig.from_env` reads ``RAGKIT_MILVUS_URI`` / ``RAGKIT_MILVUS_TOKEN``, and
:meth:`MilvusConfig.client` opens a ``pymilvus.MilvusClient`` (pymilvus is imported only then).

Example:
    >>> cfg = MilvusConfig("http://127.0.0.1:19530", collection="docs")
    >>> cfg.docs_collection
    'docs__docs'
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ragkit.core.errors import IndexStateError, ValidationError

__all__ = ["MilvusConfig"]


@dataclass(frozen=True)
class MilvusConfig:
    """Where the Milvus backend lives.

    Attributes:
        uri: ``"http://127.0.0.1:19530"`` (a server or cluster) or a local file path
            ``"./ragkit.db"`` (embedded milvus-lite, started by pymilvus).
        token: ``"user:password"`` or an API key; ``""`` for none.
        collection: collection name (letters, digits, ``_``); a second collection
            ``<collection>__docs`` holds documents and sections, a third ``<collection>__catalog``
            one record per document (what sync, staleness and the tools' listings read).
        analyzer: the Milvus analyzer of the BM25 field (``"english"``: stemmed, stopworded,
            closest to ragkit's tokenizer; ``"standard"``: lowercase words only).
        dense_index: Milvus index type of the dense field (``"FLAT"`` exact, as the in-memory
            index; ``"HNSW"`` or ``"AUTOINDEX"`` on a cluster for large corpora).
    """

    uri: str
    token: str = ""
    collection: str = "ragkit"
    analyzer: str = "english"
    dense_index: str = "FLAT"

    def __post_init__(self) -> None:
        if not isinstance(self.uri, str) or not self.uri.strip():
            raise ValidationError("MilvusConfig: uri is empty; give http://host:19530 or a ./file.db path "
                                  "(or set RAGKIT_MILVUS_URI)", field="uri")
        name = self.collection
        if not name or not (name[0].isalpha() or name[0] == "_") or \
                not all(ch.isalnum() or ch == "_" for ch in name) or len(name) > 200:
            raise ValidationError(f"MilvusConfig: collection {name!r} is not a valid Milvus name; use "
                                  "letters, digits and '_', starting with a letter", field="collection")
        if self.analyzer not in ("english", "standard"):
            raise ValidationError(f"MilvusConfig: analyzer={self.analyzer!r}; use 'english' or 'standard'",
                                  field="analyzer")

    @classmethod
    def from_env(cls, collection: str = "ragkit") -> MilvusConfig:
        """``RAGKIT_MILVUS_URI`` and ``RAGKIT_MILVUS_TOKEN`` (raises if the URI is unset)."""
        uri = os.environ.get("RAGKIT_MILVUS_URI", "")
        if not uri:
            raise ValidationError("RAGKIT_MILVUS_URI is not set; export it (http://host:19530 or "
                                  "./ragkit.db), or pass MilvusConfig(uri=...)", field="RAGKIT_MILVUS_URI")
        return cls(uri=uri, token=os.environ.get("RAGKIT_MILVUS_TOKEN", ""), collection=collection)

    @property
    def docs_collection(self) -> str:
        """The collection of documents, sections and the meta record."""
        return f"{self.collection}__docs"

    @property
    def catalog_collection(self) -> str:
        """The collection of one small record per document (content hash, times, envelope fields,
        links) and the index's state (generation), read by sync, staleness and the tools."""
        return f"{self.collection}__catalog"

    def client(self) -> Any:
        """A ``pymilvus.MilvusClient`` for this configuration."""
        import logging

        from pymilvus import MilvusClient

        # query_iterator warns on every call that milvus-lite has no mvccTs; it is harmless
        logging.getLogger("pymilvus.orm.iterator").setLevel(logging.ERROR)
        uri = self.uri
        if "://" not in uri:  # a local file: embedded milvus-lite, started by pymilvus
            uri = str(Path(uri).expanduser().resolve())
            try:
                import milvus_lite  # noqa: F401
            except ImportError as exc:
                raise IndexStateError(
                    f"a local Milvus file ({uri}) needs milvus-lite 2.5.x and, for its import, setuptools "
                    f"< 81 ({exc}); pip install 'ragkit[scale]', or start a server with "
                    "ragkit.backends.milvus.start_local(dir) and use its http:// uri") from None
        # no keepalive pings on an idle connection: milvus-lite answers them with GOAWAY "too many pings"
        # after ~30 s idle, which breaks a client reused after a long pipeline stage
        return MilvusClient(uri=uri, token=self.token, timeout=60,
                            grpc_options={"grpc.keepalive_permit_without_calls": 0})
