"""From delivered spans to decisions: evidence records, resolution, the decision record, citation checks."""

from ragkit.evidence.citations import (
    CITATION_RE,
    Citation,
    CitationError,
    ClaimVerdict,
    Verification,
    enforce,
    parse_citations,
    verify,
)
from ragkit.evidence.decision import STATUSES, Conflict, Decision, DecisionRecord, Rejected, Selected
from ragkit.evidence.fit import FITS, SentenceFit
from ragkit.evidence.resolution import resolve
from ragkit.evidence.spans import Evidence
from ragkit.text.relevance import question_terms

__all__ = [
    "CITATION_RE",
    "Citation",
    "CitationError",
    "ClaimVerdict",
    "Conflict",
    "Decision",
    "DecisionRecord",
    "Evidence",
    "FITS",
    "Rejected",
    "STATUSES",
    "Selected",
    "SentenceFit",
    "Verification",
    "enforce",
    "parse_citations",
    "question_terms",
    "resolve",
    "verify",
]
