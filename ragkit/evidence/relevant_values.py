"""Rule 6, relevance: the value each source states about the question, with the sentence it rests on.

For every item still open, :func:`read_relevant_values` reads the values of the asked forms
(:func:`ragkit.text.asked.asked_forms`; for a free-text question, its sentences) and keeps the one whose
sentence, situated by its section heading and table header (:func:`ragkit.text.relevance.context`), shares
the most with the question: its content-word stems (:data:`ragkit.text.words.SAME_MEANING` classes match
each other), the tenant or identifiers it names, the source's own condition. Values the question names,
headings, column headers, statuses outside a status field, values stated for another code
(``| DKK | 10:30 |`` for a CHF question), identifiers of another shape and, for a why-question, non-causal
sentences are not answers. When no value anywhere relates to the question's words, only sources the
question's identifiers lead to by links keep theirs.

Example:
    >>> from ragkit.evidence.spans import Evidence
    >>> ev = Evidence.of("rb-1#s", "GBP cutoff 14:30. EUR cutoff 16:00.", {"doc_id": "rb-1"})
    >>> r = Resolution("Which EUR cutoff applies?", [ev], None, None)
    >>> read_relevant_values(r)
    >>> r.items[0].value.surface, sorted(r.items[0].matched)
    ('16:00', ['EUR'])
"""

from __future__ import annotations

import re

from ragkit.evidence.fit import situated_sentence
from ragkit.evidence.resolution_state import Item, Resolution, names_identifier, refers_to
from ragkit.text.asked import counts_unit
from ragkit.text.asking import questions_of
from ragkit.text.contrast import contrasting
from ragkit.text.normalise import normalise_value
from ragkit.text.ranges import in_band, other_month, point_figures, states_point
from ragkit.text.references import (
    clause_called,
    clause_names,
    clause_span,
    defined_terms,
    defines_asked,
    holds,
    references,
)
from ragkit.text.relevance import (
    CAUSE,
    CODE,
    DEONTIC,
    DETECTION,
    EXAMPLE,
    NOT_CODES,
    ROOT_CAUSE,
    context,
    illustrative,
    is_heading_or_table_head,
    is_table_row,
    mentions,
    named_instance,
    question_terms,
    table_cell,
    with_codes,
)
from ragkit.text.value_patterns import FORM_KIND
from ragkit.text.values import Value, cell_value, read_values, sentence_at, sentence_spans
from ragkit.text.words import compound_stems, id_shape, stem, word_stems

__all__ = ["read_relevant_values"]

#: Quantities a question that names no kind of value may still ask for ("how soon", "what slice").
_QUANTITIES = ("time", "amount", "duration", "percentage", "count")
#: A sentence that says what its subject is: "The fix was to add disk alerts ..." (the noun it defines).
_DEFINES = re.compile(r"\W*(?:the|its|their|our)\s+(?:[\w-]+\s+){0,2}?([\w-]+)\s+(?:is|was|are|were)\b", re.I)


def read_relevant_values(r: Resolution) -> None:
    """Read each open item's relevant value into ``value``, ``score`` and ``matched`` (rule 6)."""
    if not r.forms and not r.causal and not r.deontic and r.fit is not None:
        _infer_forms(r)
    code_stems = {stem(c.lower()) for c in r.codes}  # a code locates a fact; it does not ask one
    # the words that say what is asked of the things the question names (not the names themselves)
    relation = r.predicate - code_stems - word_stems(" ".join([*r.ids, *r.entities]))
    stating = _stating(r)
    foreign = tuple(r.foreign_prefixes)  # the keys of other record types than the one asked
    id_stems = word_stems(" ".join(r.ids))
    # a free-text question that states a figure looks up the sentence stating it ("In which month
    # were 99.69% on time?"): that sentence relates to it as fully as one sharing all its words
    figures = [v.surface for v in read_values(r.ask, forms=("percentage", "amount", "duration", "time"))]
    coded_ask = with_codes(r.ask)  # "euro account" is the EUR account: a code, judged apart
    # the asking sentence says what is asked, the sentence it leans on about what ("... subject to a cap
    # set in another clause. What is that cap?"): its own words outweigh the context's
    asking = questions_of(r.ask)
    # a question sentence that looks a record up by a point figure (a time of day, a rate) is
    # answered only by a sentence stating it ("by 07:45" does not answer "which tenant's report is due by
    # 10:00?"); a yes/no question's figure is only proposed, a why-question's places the event
    keys = {} if r.yes_no or r.causal else point_figures(asking)
    focus = question_terms(asking) & r.predicate if asking != r.ask.strip() else set()
    r.predicate |= defined_terms([i.ev.text for i in r.alive()], r.predicate)
    # "subject to the cap in clause 12.4": clause 12.4 of that document states the cap
    docs = {i.ev.doc_id for i in r.alive()}
    called = {d: clause_names([i.ev.text for i in r.items if i.ev.doc_id == d]) for d in docs}
    for it in r.alive():
        candidates: list[tuple[float, Value, frozenset[str], str]] = []
        text = it.ev.text
        values = (
            read_values(text, forms=r.forms)
            if r.forms
            else [
                Value("text", normalise_value("text", text[a:b]), text[a:b], a, b, "text")
                for a, b in sentence_spans(text)
                if not is_heading_or_table_head(text, a, b)
            ]
        )
        for v in values:
            if r.forms and mentions(r.question, v.surface) and not (r.yes_no and v.form in r.forms):
                # a value the question itself names (its ticket, its date) is not the answer; the
                # value a yes/no question proposes ("still 11:15?") may be, if a source states it
                continue
            if r.shape and v.form == "id" and id_shape(v.surface) != r.shape:
                continue  # "which commit" is answered by a hash, not by an account or a ticket key
            if r.id_prefixes and v.form == "id" and not v.surface.upper().startswith(tuple(r.id_prefixes)):
                continue  # "shipped as RO-8103?" is answered by a rollout key, not a ticket key
            if foreign and v.form == "id" and v.surface.upper().startswith(foreign):
                continue  # "what's the rollout id?" is not answered by a ticket's key
            if not _counts_asked(r, v, text):
                continue  # "3 payout files" does not answer "how many closed batches"
            if r.codes and not _about_asked_code(r, text, v.start):
                it.off_code = True
                continue  # "| DKK | 10:30 |" does not answer a question about CHF
            a, b = sentence_at(text, v.start) if r.forms else (v.start, v.end)
            sentence = text[a:b]
            # a heading (a timestamp, a section title) or a column header is no claim; the title
            # line of a record names its key ("# OPS-1847: Rounding drift ..."): "what's its key?"
            titled = (
                v.form == "id" and mentions(it.ev.envelope.title, v.surface)
                and it.ev.doc_id.lower().startswith(v.surface.lower())
            )
            if (sentence.lstrip().startswith("#") or is_heading_or_table_head(text, a, b)) and not titled:
                continue
            if illustrative(text, a) and not EXAMPLE.search(r.question):
                continue  # an example's figures are one occurrence's, not the rule's (unless asked)
            row = is_table_row(sentence)
            band = in_band(r.ask, sentence) if row else None
            if band is False or row and other_month(r.question, sentence):
                continue  # a schedule's row for another band (or month) than the question names
            if not r.forms and keys and not states_point(sentence, keys):
                continue
            if not r.forms and defines_asked(sentence, r.ask):
                continue  # "the recovery time objective (RTO) is how long ..." is no service's RTO
            if not r.forms and (cell := table_cell(text, a, b, r.ask)) is not None:
                v = cell_value(text, *cell)  # a table row answers by the column asked ("which bank")
            elif not r.forms and (instance := named_instance(text, a, b, r.ask)) is not None:
                x, y = instance  # "Which merchant ...?": the identifier after "merchant"
                v = Value("id", normalise_value("id", text[x:y]), text[x:y], x, y, "id")
            if v.form == "status" and not re.search(r"\b(status|state|result)\b", sentence, re.I):
                continue  # a status is stated by a status field; "until this is closed" states none
            if v.form == "person" and v.surface.lower() in r.tenants:
                continue  # a tenant's name is not a person's
            # a table's value is situated by its own column's header, not the other columns'
            situated = sentence + "\n" + context(text, v.start, cell=bool(r.forms))
            header = situated.rsplit("\n", 1)[-1] if row and r.forms else ""
            # "| sepa-connector | 15 minutes | 90 minutes |": a column the question does not name says
            # less than a sentence that does (the row alone does not say which of its figures is asked)
            unheaded = bool(header) and not word_stems(header) & r.predicate and any(
                x is not v and x.form == v.form and a <= x.start < b for x in values)
            situated += " " + clause_called(sentence, called[it.ev.doc_id])
            if contrasting(coded_ask, sentence, situated + " " + it.ev.envelope.title):
                continue  # "disputes team" where the question asks about the treasury team
            # (an id counts once: named_here; "sepa-connector" here says the "sepa connector" asked about)
            matched = (word_stems(situated) | compound_stems(sentence, r.predicate)) & r.predicate - id_stems
            conditional = any(c.lower() in sentence.lower() for c in it.ev.envelope.conditions)
            if matched and matched <= code_stems and not conditional:
                # a value's own currency ("EUR 12,600") does not relate it to "the EUR sweep
                # threshold"; a code beside the value ("| CZK | 15:30 |") does
                matched = word_stems(situated.replace(v.surface, " ")) & r.predicate
            score = float(len(matched) + 4 * len(matched & focus)) + (2 if conditional else 0)
            if matched:
                # the document's title situates a sentence that relates to the question, more weakly
                # than its own words; it does not make an unrelated sentence ("late on 6 days" in the
                # board's minutes) an answer
                score += 0.5 * len(word_stems(it.ev.envelope.title) & r.predicate - matched - code_stems)
            score -= len(word_stems(sentence) & r.negated)  # the case the question rules out
            score = score / 2 if unheaded else score
            # the row whose band holds the question's figure is the schedule's answer to it; the key
            # of the record stating the question's value answers a reverse lookup ("took 54 minutes
            # to detect: which ticket?"): each as fully as a sentence sharing every word of the question
            named_after = v.form == "id" and any(v.surface.lower() in s for s in stating.values())
            if band or named_after or not r.forms and any(mentions(sentence, f) for f in figures):
                score = max(score, float(len(r.predicate))) + 2
            elif v.form == "id" and it.ev.doc_id in stating:
                score += 1  # an identifier in a record that states the question's value
            if score > 0 and any(mentions(sentence, t) for t in r.asked_tenants):
                score += 1
            named = {e for e in r.entities if mentions(situated, e)} | (
                {"@condition"} if conditional else set()
            )
            named_here = [x for x in r.ids if x != v.surface and mentions(sentence, x)]
            # a sentence read as free text answers by what it says of the identifier, not by naming
            # it: "Tracked in OPS-9577." says nothing of the fix that "What fix does OPS-9577 ...?" asks
            # (a table row keyed by it is its record: "| acme-25788 | USD | Solent Bank |")
            keyed = row and sentence.strip().strip("|").split("|")[0].strip() in named_here
            score += len(named_here) if r.forms or matched or keyed else 0
            own_record = any(x != v.surface and mentions(it.ev.envelope.title, x) for x in r.ids)
            if (
                r.forms and relation and named_here and row and v.form not in ("id", "person")
                and not matched & relation and not conditional and not own_record
            ):
                # another figure of the identifier's row ("| hooli-72448 | EUR 193,718.51 |" in a
                # ticket, asked for the account's sweep threshold): naming it does not state what is
                # asked. (A free-text question reads the whole row: the record of what it names.)
                score = 0.0
            if not named_here and own_record and v.form != "id":
                # a section of the record the question names ("Owner: Thorsby" in OPS-1847's ticket);
                # not for identifiers: a record names many (batches, accounts), rarely the one asked
                score += 1
            # (a sentence under a "Root cause" heading states the cause in its own words)
            above = next((ln for ln in reversed(text[:a].splitlines()) if ln.lstrip().startswith("#")), "")
            rooted = bool(ROOT_CAUSE.search(sentence) or ROOT_CAUSE.search(above))
            if (
                not r.forms
                and r.causal
                and (not (CAUSE.search(sentence) or rooted) or DETECTION.search(sentence))
            ):
                continue  # a why-question is answered by a causal statement, or not at all
            if not r.forms and r.causal:
                score += 4 if rooted else 2  # and best by the one that says it is the root cause
            if not r.forms and r.deontic and DEONTIC.search(sentence):
                score += 2  # "what does the policy require?" is answered by what it says must happen
            if not r.forms and (d := _DEFINES.match(sentence)) and stem(d.group(1).lower()) in r.predicate:
                score += 2  # "what fix ...?": "The fix was to ..." says what it is; "fix deployed" names it
            situated_text = situated_sentence(text, a, b, it.ev.envelope.title)
            candidates.append((score, v, frozenset(named), situated_text))
        if candidates:
            _choose(r, it, candidates)
    holders = [i for i in r.alive() if i.value is not None]
    if any(i.score > 0 for i in holders):
        keep = {id(i) for i in holders if i.score > 0}
    else:
        # nothing relates to the question's words: only values in sources the question's
        # identifiers lead to ("follow OPS-1891 to the policy: what limit does it set?"), or that
        # the passage matching the question defers to ("subject to the cap in clause 12.4"), count
        keep = {id(i) for i in [*_linked_from_named(r), *_referred_by_match(r), *_named_record_value(r)]}
    for i in holders:
        if id(i) not in keep:
            i.value = None


#: Forms a reverse lookup states ("took 54 minutes", "a EUR 30,000 credit") to find a record by.
_STATED = ("duration", "amount", "percentage", "time", "date")


def _stating(r: Resolution) -> dict[str, str]:
    """For a question asking an identifier by a fact it states ("One incident took 54 minutes to
    detect: which ticket was that?"), the documents whose text states that value: doc id ->
    its id and title (lower case), which name the record it is about."""
    if "id" not in r.forms:
        return {}
    stated = {v.value for v in read_values(r.ask, forms=_STATED)}
    if not stated:
        return {}
    return {
        it.ev.doc_id: f"{it.ev.doc_id} {it.ev.envelope.title}".lower()
        for it in r.alive()
        if stated & {v.value for v in read_values(it.ev.text, forms=_STATED)}
    }


def _infer_forms(r: Resolution) -> None:
    """The answer's form from what the best-fitting sentence holds, when the question's words name none.

    "How soon must a tenant hear from us?" names no kind of value, but the sentence that answers
    it ("Tenants are notified within 90 minutes") holds a duration: the question asks for one. The
    sentences of every open item are scored with the resolution's fit; the best one at or above
    its threshold decides, by the first quantity it states that the question does not name.
    """
    assert r.fit is not None
    sentences: list[str] = []
    held: list[str] = []
    for it in r.alive():
        text = it.ev.text
        for a, b in sentence_spans(text):
            if is_heading_or_table_head(text, a, b):
                continue
            values = read_values(text[a:b], forms=_QUANTITIES)
            forms = [v.form for v in values if not mentions(r.question, v.surface)]
            if forms:
                sentences.append(situated_sentence(text, a, b, it.ev.envelope.title))
                held.append(forms[0])
    if not sentences:
        return
    fits = r.fit(r.question, sentences)
    best = max(range(len(fits)), key=fits.__getitem__)
    if fits[best] >= r.fit.threshold:
        r.forms = (held[best],)
        r.kind = FORM_KIND[held[best]]


def _choose(r: Resolution, it: Item, candidates: list[tuple[float, Value, frozenset[str], str]]) -> None:
    """Set ``it``'s value to its best candidate: most shared words, then (with a fit) the best fit,
    then fewest of the question's identifiers named ("| 07:34 | OPS-1935 opened |" only names one).

    With a :class:`ragkit.evidence.fit.SentenceFit`, a sentence the cross-encoder finds answering
    the question counts as one more shared word, so a sentence that answers in other words
    ("the retry ceiling is 4 attempts" for "how many times may a payout be retried") is relevant.
    """
    fits = r.fit(r.question, [c[3] for c in candidates]) if r.fit is not None else [0.0] * len(candidates)
    threshold = r.fit.threshold if r.fit is not None else 0.0
    best: tuple[float, float, int] | None = None
    for (score, v, named, _), fit in zip(candidates, fits, strict=True):
        if r.fit is not None and fit >= threshold:
            score += 1
        key = (score, fit, -len(named & set(r.ids)))
        if best is None or key > best:
            best = key
            it.score, it.value, it.matched, it.fit = score, v, named, fit


def _linked_from_named(r: Resolution) -> list[Item]:
    """Sources reached by links from a source that names one of the question's identifiers."""
    alive = r.alive()
    frontier = [i for i in alive if any(names_identifier(i, x) for x in r.ids)]
    seen = {id(i) for i in frontier}
    reached: list[Item] = []
    while frontier:
        cur = frontier.pop()
        for nxt in alive:
            if id(nxt) not in seen and refers_to(cur, nxt):
                seen.add(id(nxt))
                reached.append(nxt)
                frontier.append(nxt)
    return reached


def _named_record_value(r: Resolution) -> list[Item]:
    """The sections of the record the question names by its key ("For OPS-6937, how much was at
    stake?"), when together they state exactly one value of the asked form: its own field
    ("Amount in question: CZK 17,696.17") answers whatever words the question uses."""
    if not r.forms or not r.ids:
        return []
    own = [i for i in r.alive() if any(mentions(i.ev.envelope.title + " " + i.ev.doc_id, x) for x in r.ids)]
    held = [i for i in own if i.value is not None]
    stated = [v for i in own for v in read_values(i.ev.text, forms=r.forms)]
    values = {v.value for v in stated if not mentions(r.question, v.surface)}
    return held if len(values) == 1 and held else []


def _referred_by_match(r: Resolution) -> list[Item]:
    """Sections that the sentences sharing most of the question's words refer to, in the same
    document (:func:`ragkit.text.references.references`), with their value re-read from the named
    clause when that clause is numbered in their text.

    "How often do we go through the manual-intervention figures?" matches "Figures on manual
    interventions ... are presented at the service review under clause 9.1", which states no
    figure; clause 9.1 ("Service reviews take place every 6 weeks") does.
    """
    best, pointing = 1, []  # a reference counts from a sentence sharing at least two words
    for it in r.alive():
        text = it.ev.text
        for a, b in sentence_spans(text):
            refs = references(text[a:b])
            shared = len(word_stems(text[a:b]) & r.predicate)
            if refs and shared > best:
                best, pointing = shared, [(it, refs)]
            elif refs and shared == best and best > 1:
                pointing.append((it, refs))
    found: list[Item] = []
    for source, refs in pointing:
        for it in r.alive():
            if it is source or it.ev.doc_id != source.ev.doc_id or it in found:
                continue
            for kind, number in refs:
                if not holds(it.ev.anchor, it.ev.text, kind, number):
                    continue
                span = clause_span(it.ev.text, number) if "." in number else None
                if span is not None:
                    clause = it.ev.text[span[0] : span[1]]
                    inside = [v for v in read_values(clause, forms=r.forms) if _counts_asked(r, v, clause)]
                    if inside:
                        v, at = inside[0], span[0]
                        it.value = Value(v.kind, v.value, v.surface, v.start + at, v.end + at, v.form)
                if it.value is not None:
                    found.append(it)
                    break
    return found


def _counts_asked(r: Resolution, v: Value, text: str) -> bool:
    """False for a count or duration of another thing than the one asked ("3 payout files" for
    "how many closed batches"; a bare "| 3,600 |" whose column header is not "Bank transfers");
    True otherwise."""
    bare = v.form == "count" and v.surface.replace(",", "").isdigit()
    if bare:  # a table cell: its column's header says what it counts
        header = context(text, v.start, cell=True).rsplit("\n", 1)[-1]
        return r.unit is not None and counts_unit(header, r.unit)
    return not (r.unit and v.form in ("count", "duration") and not counts_unit(v.surface, r.unit))


def _about_asked_code(r: Resolution, text: str, position: int) -> bool:
    """False when the value's sentence (with its heading and table header) names another code
    (``DKK``) but none the question names (``CHF``); True otherwise."""
    a, b = sentence_at(text, position)
    situated = text[a:b] + "\n" + context(text, a)
    named = {c for c in re.findall(CODE, situated) if c not in NOT_CODES}
    return not named or bool(named & r.codes)
