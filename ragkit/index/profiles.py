"""The corpus profile an index keeps: recorded in its generation manifest, read back on load.

An index is read with the profile of the corpus it holds (:class:`ragkit.text.CorpusProfile`):
:func:`with_profile` records one in a manifest (as its JSON text, so that it reads back exactly;
the generation that holds it is committed atomically, see :mod:`ragkit.index.storage`), and
:func:`manifest_profile` reads it back, or gives the bundled profile for an index saved before
indexes kept one. The Milvus backend keeps it in its meta record the same way.

Example:
    >>> from ragkit.text.profile import bundled_profile
    >>> manifest_profile({}) is bundled_profile()
    True
    >>> other = bundled_profile().replace(name="other")
    >>> manifest_profile(with_profile({}, other, "derived")) == other
    True
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any

from ragkit.text.profile import CorpusProfile, bundled_profile, load_profile_text

__all__ = ["with_profile", "manifest_profile"]


def with_profile(manifest: Mapping[str, Any], profile: CorpusProfile, source: str) -> dict[str, Any]:
    """A copy of ``manifest`` that records ``profile`` (``profile``: its JSON text) and where it
    came from (``profile_source``: the file it was read from, or ``"derived"``)."""
    return {**manifest, "profile": profile.to_json(), "profile_source": source}


def manifest_profile(manifest: Mapping[str, Any]) -> CorpusProfile:
    """The corpus profile ``manifest`` records; :func:`ragkit.text.bundled_profile` when it records
    none. Equal profiles read back as one object (the lazy views of :mod:`ragkit.text.profile_views`
    compute once per profile object), and a copy of the bundled profile as the bundled one itself."""
    text = manifest.get("profile")
    return _read_profile(text) if isinstance(text, str) and text else bundled_profile()


@functools.lru_cache(maxsize=16)
def _read_profile(text: str) -> CorpusProfile:
    profile = load_profile_text(text, where="the index manifest's profile", upgrade=True)
    return bundled_profile() if profile == bundled_profile() else profile
