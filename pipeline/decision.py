"""From verified claims to the decision: sufficiency, each attempt's and each part's
outcome, conflicts, and the answer or refusal.

Pure functions over recorded data, so the orchestrator and replay decide identically:
both call `sufficiency`, `AttemptSummary.of`, `decide_part` and `conclude`, nothing else.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, replace
from itertools import combinations
from typing import Callable, Mapping, Sequence

from .ambiguity import find_ambiguity, is_provision_chunk, regulations_capped, restating_regulations
from .audit import LOCAL_KEY
from .citations import cite_path
from .restatements import stated_citation
from . import status
from .config import ConfidenceSettings, Route
from .definitions import asked_term
from .direct_answer import direct_answer
from .numbers import extract_figures
from .retrieval import jaccard
from .subjects import OtherSubject, subjects_listing, subjects_of
from .trace import PartTrace
from .types import (AsOf, Candidate, Chunk, Conflict, DocumentStatus, NearestRecord, PartOutcome, Result, Sufficiency,
                    Term, VerifiedClaim)

_ITEM_LABEL = re.compile(r"(?:^|\n|\[\.\.\.\])\s*\(?$")  # a label opens a quoted piece
_REFERENCE = re.compile(r"\b(pasal|ayat|paragraf|paragraph|article|huruf|angka|nomor|no\.)\s*\(?$", re.IGNORECASE)

# refusal reason codes
NO_CANDIDATES = "no_candidates"
NO_SUPPORTED_CLAIMS = "no_supported_claims"
MISSING_EVIDENCE = "missing_evidence"
TIMEOUT = "timeout"
ONLY_HISTORY = "only_history"  # every supported claim states a provision not in force on the answer's date
# the answer's sentence is written alike of other subjects and the question says not which; also the Confidence.capped_by
# of such a part's claims (what they state holds of one subject among several)
SEVERAL_SUBJECTS = "several_subjects"

DOCUMENT_NOT_IN_CORPUS = "document_not_in_corpus"  # not a refusal reason of its own: said alongside one

_REASONS = {
    DOCUMENT_NOT_IN_CORPUS: {"id": "Korpus tidak memuat {missing}: tidak ada sumber untuk dokumen itu.",
                             "en": "The corpus does not hold {missing}: there is no source for it."},
    NO_CANDIDATES: {"id": "Tidak ada dokumen dalam korpus yang relevan dengan pertanyaan ini.",
                    "en": "No record in the corpus is relevant to this question."},
    NO_SUPPORTED_CLAIMS: {"id": "Tidak ada klaim yang didukung oleh kutipan dari sumber yang ditemukan.",
                          "en": "No claim could be supported by quotes from the records found."},
    MISSING_EVIDENCE: {"id": "Bukti yang diperlukan tidak ditemukan: {missing}.",
                       "en": "Required evidence was not found: {missing}."},
    ONLY_HISTORY: {"id": "Tidak ada ketentuan yang berlaku pada tanggal jawaban yang menjawab pertanyaan ini: yang "
                         "ditemukan hanya riwayat (dicabut, diubah, atau belum berlaku), ditampilkan sebagai riwayat "
                         "beserta ketentuan yang menentukannya.",
                   "en": "No provision in force on the answer's date answers this: what was found is history (revoked, "
                         "amended or not yet in force), shown as history with the provision that decides it."},
    SEVERAL_SUBJECTS: {"id": "Pertanyaan ini tidak menyebut yang mana yang dimaksud, dan beberapa peraturan menyatakan "
                              "kalimat yang sama untuk subjek yang berbeda: {missing}. Sebutkan peraturannya (atau "
                              "daerah, tahun, atau pihaknya) agar dapat dijawab.",
                        "en": "The question does not say which it means, and several regulations state the same "
                              "sentence of different subjects: {missing}. Name the regulation (or the region, year or "
                              "party) to get an answer."},
    TIMEOUT: {"id": "Batas waktu terlampaui sebelum jawaban dapat diverifikasi; tidak ada yang ditampilkan.",
              "en": "The time limit passed before an answer could be verified; nothing is shown."},
    "generator_failed": {"id": "Generator gagal menjawab; tidak ada yang ditampilkan.",
                         "en": "The generator failed; nothing is shown."},
    "generator_output_truncated": {"id": "Keluaran generator terpotong; tidak ditampilkan.",
                                   "en": "The generator's output was truncated; nothing is shown."},
    "generator_output_invalid_json": {"id": "Keluaran generator bukan JSON yang sah; tidak ditampilkan.",
                                      "en": "The generator's output was not valid JSON; nothing is shown."},
    "generator_output_off_schema": {"id": "Keluaran generator tidak sesuai skema klaim; tidak ditampilkan.",
                                    "en": "The generator's output did not fit the claim schema; nothing is shown."},
}


# evidence categories (configs/categories.yaml) in words, for a refusal that says what is missing
CATEGORY_WORDS = {
    "definition": {"id": "definisi", "en": "a definition"},
    "rate": {"id": "tarif atau persentase", "en": "a rate or percentage"},
    "amount": {"id": "jumlah uang", "en": "an amount of money"},
    "deadline": {"id": "tanggal atau batas waktu", "en": "a date or time limit"},
    "quantity": {"id": "jumlah atau angka", "en": "an amount or number"},
    "recognition": {"id": "ketentuan pengakuan", "en": "a recognition rule"},
    "measurement": {"id": "ketentuan pengukuran", "en": "a measurement rule"},
    "disclosure": {"id": "ketentuan pengungkapan", "en": "a disclosure requirement"},
    "sanction": {"id": "sanksi atau denda", "en": "a sanction or fine"},
    "procedure": {"id": "tata cara", "en": "a procedure"},
    "scope": {"id": "ruang lingkup", "en": "a scope"},
}


def category_words(code: str, lang: str) -> str:
    """An evidence category as a reader says it ("rate": "tarif atau persentase"); an unknown code as it is."""
    return CATEGORY_WORDS.get(code, {}).get("id" if lang == "id" else "en", code)


def reason_text(code: str, lang: str, missing: Sequence[str] = ()) -> str:
    """A refusal reason in words; `missing`: the evidence categories it names (in words) or, for a document not in
    the corpus, the documents."""
    template = _REASONS.get(code, {}).get(lang) or _REASONS.get(code, {}).get("en") or code
    named = code in (DOCUMENT_NOT_IN_CORPUS, SEVERAL_SUBJECTS)  # documents, not evidence categories
    words = missing if named else [category_words(m, lang) for m in missing]
    return template.format(missing=", ".join(words))


def unmentioned_text(terms: Sequence[str], lang: str) -> str:
    """The question's terms no record of the collection mentions: said, so a refusal names what the collection lacks."""
    said = ", ".join(f"«{t}»" for t in terms)
    return (f"Tidak ada dokumen dalam koleksi ini yang menyebut {said}." if lang == "id"
            else f"No document in this collection mentions {said}.")


UNMENTIONED = "unmentioned"  # Confidence.capped_by: the question names something no record mentions
OTHER_DEFINITIONS = "other_definitions"  # Confidence.capped_by: a term one regulation defines, the claim from another
SEVERAL_DEFINITIONS = "several_definitions"  # Confidence.capped_by: a term two or more regulations define, none named


def _as_written(question: str, term: str) -> str:
    """A term as the question writes it ("Singapura" for the analysed "singapura"), else the term."""
    m = re.search(re.escape(term), question, re.IGNORECASE)
    return m[0] if m else term


def named_unmentioned(question: str, unmentioned: Sequence[str]) -> tuple[str, ...]:
    """Of the terms no record mentions, those the question writes as a name: capitalised after its first word
    ("Singapura", "PPnBM", "Indonesia-Singapore"). A lower-case word no record has is more often a typo than a thing,
    and so is a capitalised one a letter or two from another word of the question ("Peraturan Pemerinah" beside
    "Peraturan Pemerintah")."""
    words = [w.strip("?,.;:!()\"'«»") for w in question.split()]
    def typo(t: str) -> bool:
        return any(w.casefold() != t.casefold() and len(w) >= 5 and _edits(w.casefold(), t.casefold()) <= 2
                   for w in words)
    return tuple(t for t in unmentioned
                 if any(w.casefold().startswith(t.split()[0].casefold()) and w[:1].isupper() for w in words[1:])
                 and not typo(t))


def _edits(a: str, b: str) -> int:
    """Levenshtein distance (small words only: a question's)."""
    if abs(len(a) - len(b)) > 2:
        return 3
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        cur = [i]
        for j, cb in enumerate(b, 1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != cb)))
        prev = cur
    return prev[-1]


def nearest_text(nearest: Sequence[NearestRecord], lang: str) -> str:
    """Where the search came closest, for a refusal whose records state no answer."""
    where = "; ".join(n.path or f"{n.document}, {n.location}" for n in nearest[:2])
    return f"Yang paling dekat: {where}." if lang == "id" else f"The closest: {where}."


def sufficiency(route: Route, claims: Sequence[VerifiedClaim], chunks: Mapping[str, Chunk]) -> Sufficiency:
    """Each required category must be present in a chunk cited by a supported claim.

    Examples and illustrations do not satisfy a requirement unless the route says so:
    guidance never stands in for a provision. Nothing is inferred from silence.
    """
    satisfied: dict[str, str] = {}
    for cat in route.required:
        for claim in claims:
            if claim.status != "supported" or (claim.is_example and not route.examples_satisfy):
                continue
            hit = next((c.chunk_id for c in claim.citations
                        if c.ok and cat in chunks[c.chunk_id].categories), None)
            if hit:
                satisfied[cat] = hit
                break
    missing = tuple(c for c in route.required if c not in satisfied)
    return Sufficiency(required=tuple(route.required), satisfied=satisfied, missing=missing)


@dataclass(frozen=True)
class AttemptSummary:
    """What the decision needs to know about one attempt."""

    supported: int
    sufficiency: Sufficiency
    failure: str | None  # the generator failed, or its output could not be parsed
    had_candidates: bool

    @classmethod
    def of(cls, claims: Sequence[VerifiedClaim], sufficiency: Sufficiency, failure: str | None,
           had_context: bool) -> "AttemptSummary":
        return cls(sum(c.status == "supported" for c in claims), sufficiency, failure, had_context)

    @property
    def ok(self) -> bool:
        return self.supported > 0 and self.sufficiency.ok and self.failure is None


def decide_part(index: int, question: str, route: Route, attempts: Sequence[AttemptSummary]) -> PartOutcome:
    """The first attempt that succeeded answers the part; otherwise the last one says why not."""
    for i, a in enumerate(attempts):
        if a.ok:
            return PartOutcome(index, question, route.name, True, i, None)
    last = attempts[-1]
    if last.failure:
        code = last.failure
    elif not last.had_candidates:
        code = NO_CANDIDATES
    elif last.supported and last.sufficiency.missing:
        code = MISSING_EVIDENCE
    else:
        code = NO_SUPPORTED_CLAIMS
    return PartOutcome(index, question, route.name, False, None, code, last.sufficiency.missing)


def find_conflicts(claims: Sequence[VerifiedClaim], chunks: Mapping[str, Chunk],
                   tokens: Callable[[str], frozenset[str]], min_overlap: float) -> list[Conflict]:
    """Supported claims about the same thing whose figures differ, from different chunks.

    Rates, amounts and dates conflict when the claims share enough terms; bare numbers
    (article references, days) only when the claims are nearly the same sentence.
    """
    out: list[Conflict] = []
    supported = [(i, c) for i, c in enumerate(claims) if c.status == "supported"]
    prepared = {}
    for i, c in supported:
        words = frozenset(t for t in tokens(c.text) if not t[0].isdigit())
        figs: dict[tuple[str, str | None], dict[str, str]] = {}
        for f in extract_figures(c.text):
            if f.kind == "number" and _REFERENCE.search(c.text[max(0, f.start - 12):f.start]):
                continue  # "Pasal 4 ayat (1)" points somewhere; it is not a quantity that can disagree
            if f.kind == "number" and _ITEM_LABEL.search(c.text[:f.start]) and c.text[f.end:f.end + 1] in ".)":
                continue  # "2. Tenaga Kerja Asing …": a list item's label, not a quantity
            figs.setdefault((f.kind, f.unit), {}).setdefault(f.value, f.text)
        prepared[i] = (words, figs, {x.chunk_id for x in c.citations})
    for (i, a), (j, b) in combinations(supported, 2):
        wa, fa, ca = prepared[i]
        wb, fb, cb = prepared[j]
        if ca & cb:
            continue
        overlap = jaccard(wa, wb)
        differing = [k for k in fa.keys() & fb.keys()
                     if overlap >= (min_overlap if k[0] != "number" else min(1.0, 2 * min_overlap))
                     and set(fa[k]) != set(fb[k])]
        if not differing:
            continue
        if any(k[0] != "number" for k in differing):  # a differing rate says more than differing ayat numbers
            differing = [k for k in differing if k[0] != "number"]

        def side(claim: VerifiedClaim, figs: dict) -> str:
            ch = chunks[claim.citations[0].chunk_id]
            values = ", ".join(text for k in differing for text in figs[k].values())
            dated = f", {ch.published}" if ch.published else ""
            upload = (f"; uploaded by {ch.uploaded_by}, authority {ch.authority}"  # not the operator's own record
                      if ch.uploaded_by and ch.uploaded_by != LOCAL_KEY else "")
            return f"{values} ({ch.title}, {claim.citations[0].location}{dated}{upload})"
        out.append(Conflict(kind="figures", detail=f"{side(a, fa)} ≠ {side(b, fb)}", claims=(i, j),
                            chunk_ids=tuple(dict.fromkeys([*(x.chunk_id for x in a.citations),
                                                           *(x.chunk_id for x in b.citations)]))))
    return out


def nearest_records(candidates: Sequence[Candidate], n: int, excerpt: int = 400, terms: Sequence[Term] = (),
                    tokens: Callable[[str], frozenset[str]] | None = None,
                    asked: frozenset[str] = frozenset()) -> list[NearestRecord]:
    """The best records retrieval did find, so a refusal points somewhere: one per document (several of a document
    the question names, `asked`), each with the question's `terms` it states (`tokens`: the analysers')."""
    out, docs = [], set()
    for c in candidates:
        if c.dropped or (c.chunk.doc_id in docs and c.chunk.doc_id not in asked):
            continue
        docs.add(c.chunk.doc_id)
        text = " ".join(c.chunk.text.split())
        have = tokens(" ".join((c.chunk.title, c.chunk.heading, c.chunk.text))) if tokens else frozenset()
        out.append(NearestRecord(c.chunk.chunk_id, c.chunk.title, c.chunk.location,
                                 text if len(text) <= excerpt else text[:excerpt].rsplit(" ", 1)[0] + " …",
                                 round(c.rerank_score if c.rerank_score is not None else c.rrf_score, 4),
                                 cite_path(c.chunk), tuple(t.term for t in terms if t.matched_by(have))))
        if len(out) >= n:
            break
    return out


def dated_claim(c: VerifiedClaim, chunks: Mapping[str, Chunk], statuses: Mapping[str, DocumentStatus], day: str | None,
                confidence: ConfidenceSettings | None) -> VerifiedClaim:
    """A claim with its provision's standing on the answer's date (`status.dated`), as the answer shows it."""
    cite = stated_citation(c) if c.citations else None
    if not day or cite is None:
        return c
    return status.dated(c, cite, chunks.get(cite.chunk_id), statuses, day, confidence)


def definers_of(question: str, named: Sequence[tuple[str, str | None]], candidates: Sequence[Candidate]) -> frozenset[str]:
    """The documents among `candidates` (an attempt's) that define the term the question asks the meaning of
    (`defines`), where it names no document of the collection; empty for any other question."""
    if not asked_term(question) or any(doc_id for _, doc_id in named):
        return frozenset()
    return frozenset(c.chunk.doc_id for c in candidates if c.defines)


def definitions_capped(c: VerifiedClaim, definers: frozenset[str], chunks: Mapping[str, Chunk],
                       confidence: ConfidenceSettings | None) -> VerifiedClaim:
    """A supported claim of a part asking what a term means (`definers`: its attempt's, `definers_of`) kept out of
    the top band where one definition is not the answer: two or more documents define the term
    (`several_definitions`: whichever is quoted first is one of several answers), or one does and the claim's own
    document is another (`other_definitions`: it does not say what the term means there). Decided from the attempt's
    own candidates, so the streamed answer shows the claim in this form from the start (pipeline/release.py). On the
    legal_qa dev split, definition answers with a TINGGI claim were at the gold Pasal 21 times of 21 where one
    document defined the term, 1 of 3 where several did (both corpora, issue 30)."""
    if confidence is None or c.status != "supported" or not definers:
        return c
    if len(definers) >= 2:
        return status.capped(c, confidence, is_provision_chunk(chunks, c), SEVERAL_DEFINITIONS)
    own = chunks.get(c.citations[0].chunk_id) if c.citations else None
    if own is not None and own.doc_id not in definers:
        return status.capped(c, confidence, is_provision_chunk(chunks, c), OTHER_DEFINITIONS)
    return c


def subjects_apply(question: str, named: Sequence[tuple[str, str | None]]) -> bool:
    """Whether an answer to `question` could hold of one subject among several (`several_subjects`): it names no
    document of the collection and asks no term's meaning (several definitions are `find_ambiguity`'s)."""
    return not any(doc_id for _, doc_id in named) and not asked_term(question)


def lead_claim(claims: Sequence[VerifiedClaim], part: int) -> VerifiedClaim | None:
    """The claim a part's answer leads with: its first supported claim in the answer's order (`status.in_force_first`:
    the first in force in the generator's order, else the first whose standing is unknown, else the first)."""
    return next((c for c in status.in_force_first(claims) if c.part == part and c.status == "supported"), None)


def several_subjects(parts: Sequence[PartTrace], claims: Sequence[VerifiedClaim], chunks: Mapping[str, Chunk],
                     question: str, named: Sequence[tuple[str, str | None]],
                     skip: frozenset[int] | set[int] = frozenset()
                     ) -> dict[int, tuple[VerifiedClaim, list[OtherSubject]]]:
    """The answered parts (but `skip`) whose lead claim (`lead_claim`) states a sentence that other documents among the
    part's candidates write of other subjects (`subjects_of`), for a question that does not say which
    (`subjects_apply`): its answer would be one subject's among several, so the part is refused and names them
    (`SEVERAL_SUBJECTS`). On the mined questions of issue 30 these were regional-formation and budget laws."""
    if not subjects_apply(question, named):
        return {}
    out = {}
    for p in parts:
        lead = lead_claim(claims, p.index) if p.outcome.answered and p.index not in skip else None
        if lead is not None:
            used = _used(p)
            found = subjects_of(lead, chunks, used.candidates, question, {d.doc_id: d for d in used.status})
            if found:
                out[p.index] = (lead, found)
    return out


def _used(part: PartTrace):
    """The attempt a part's outcome rests on: the one that answered, else the last."""
    return part.attempts[part.outcome.attempt_used] if part.outcome.answered else part.attempts[-1]


def _ranked(attempt) -> list[Candidate]:
    """An attempt's candidates in the reranker's order, the rest after."""
    order = {cid: k for k, cid in enumerate(attempt.reranked)}
    return sorted(attempt.candidates, key=lambda c: order.get(c.chunk.chunk_id, len(order)))


def _only_history(claims: Sequence[VerifiedClaim], part: int) -> bool:
    """Whether the part has supported claims and every one states a provision ended or not yet in force on the
    answer's date (standing `ended` or `not_yet`; `unknown` is not history: it is shown, said to be unknown)."""
    supported = [c for c in claims if c.part == part and c.status == "supported"]
    return bool(supported) and all(c.standing is not None and c.standing.history for c in supported)


def unmentioned_terms(question: str, first_queries: Sequence) -> tuple[str, ...]:
    """The question's own terms (each part's first query) that no record mentions in any form, as the question
    writes them."""
    return tuple(dict.fromkeys(_as_written(question, t.term) for q in first_queries for t in q.terms if t.unseen))


def unmentioned_capped(c: VerifiedClaim, chunks: Mapping[str, Chunk], confidence: ConfidenceSettings) -> VerifiedClaim:
    """A supported claim kept out of the top band because the question names something no record mentions (a treaty
    partner, a tax, a place): what the records say may be true of something else."""
    return status.capped(c, confidence, is_provision_chunk(chunks, c), UNMENTIONED) if c.status == "supported" else c


def conclude(parts: Sequence[PartTrace], question: str, lang: str, tokens: Callable[[str], frozenset[str]],
             min_overlap: float, n_nearest: int, trace_id: str,
             named: Sequence[tuple[str, str | None]] = (), as_of: Mapping | None = None,
             confidence: ConfidenceSettings | None = None) -> Result:
    """Assemble the result from decided parts.

    `named` are the documents the question names: those the corpus does not hold are said
    (`not_in_corpus`), so an answer drawn from other records is never taken for theirs. With `as_of` (the
    orchestrator's record of the answer's date: {"date": ISO, "from": request | question | profile | today, "words":
    what the question said}), each supported claim carries its provision's standing on that date (pipeline/status.py, from the attempts' recorded
    status): one not in force then is shown after those in force, never in the top band (`confidence`'s), and a
    conflict between the two says which applies."""
    absent = tuple(label for label, doc_id in named if doc_id is None)
    day = as_of["date"] if as_of else None
    claims: list[VerifiedClaim] = []
    chunks: dict[str, Chunk] = {}
    every: dict[str, DocumentStatus] = {}  # the documents each part's context held, as the attempts recorded them
    for p in parts:
        for a in p.attempts:
            chunks.update({c.chunk.chunk_id: c.chunk for c in a.candidates})
    for p in parts:
        used = _used(p)
        statuses = {d.doc_id: d for d in used.status}
        every.update(statuses)
        defining = definers_of(question, named, used.candidates)
        claims += [definitions_capped(dated_claim(c, chunks, statuses, day, confidence), defining, chunks, confidence)
                   for c in used.claims]
    # stable: supported first (those in force on the answer's date before those that are not), in generator order
    claims = status.in_force_first(claims)
    conflicts = tuple(status.decide(c, claims, lang) for c in find_conflicts(claims, chunks, tokens, min_overlap))
    # a question that names its regulation is not ambiguous; records whose figures disagree are already shown
    # side by side, each with its regulation
    # the context's regulations that write a claim's sentence word for word answer it too (read once, for the
    # ambiguity note and the cap); a question naming its regulation is answered by that one
    context = {cid: chunks[cid] for p in parts for cid in _used(p).context if cid in chunks}
    restating = {} if any(doc_id for _, doc_id in named) else restating_regulations(claims, chunks, context, every, day)
    if not any(doc_id for _, doc_id in named) and not conflicts:
        definers = [c for p in parts for c in _ranked(_used(p)) if c.defines]
        conflicts += tuple(find_ambiguity(claims, chunks, question, lang, definers, restating))
    # contract 12: a provision that a later one ended, or one not yet in force, is never shown as the answer. A part
    # whose every supported claim is such history is refused; its claims stay, shown as history with their receipts
    # and the provision that decides their standing
    history = {p.index for p in parts if p.outcome.answered and _only_history(claims, p.index)}
    # a part whose answer would be one subject's among several the question does not choose between is refused,
    # naming them; its claims stay, kept out of the top band
    alike = several_subjects(parts, claims, chunks, question, named, history)
    if alike and confidence is not None:
        claims = [status.capped(c, confidence, is_provision_chunk(chunks, c), SEVERAL_SUBJECTS)
                  if c.part in alike and c.status == "supported" else c for c in claims]
    outcomes = tuple(replace(p.outcome, answered=False, reason=ONLY_HISTORY) if p.index in history
                     else replace(p.outcome, answered=False, reason=SEVERAL_SUBJECTS) if p.index in alike
                     else p.outcome for p in parts)
    retried = any(len(p.attempts) > 1 for p in parts)
    refused = [(p, o) for p, o in zip(parts, outcomes) if not o.answered]
    dated = as_of and AsOf(as_of["date"], as_of["from"], as_of.get("words"))
    documents = status.cited_documents(claims, every, day)
    # the question's own terms (each part's first query) that no record mentions in any form
    unmentioned = unmentioned_terms(question, [p.attempts[0].query for p in parts if p.attempts])
    claims = regulations_capped(claims, chunks, named, confidence, restating)
    if confidence is not None and named_unmentioned(question, unmentioned):
        claims = [unmentioned_capped(c, chunks, confidence) for c in claims]
    if not refused:
        line = direct_answer(claims, {p.index: p.route.required for p in parts}, lang, day)
        return Result("answer", question, lang, tuple(claims), outcomes, conflicts, retried=retried, trace_id=trace_id,
                      not_in_corpus=absent, as_of=dated, direct=line, documents=documents, unmentioned=unmentioned)
    missing = tuple(dict.fromkeys(m for _, o in refused for m in o.missing_categories))
    asked = frozenset(doc_id for _, doc_id in named if doc_id)
    reasons, nearest = [], []
    for p, o in refused:
        text, near = _refused_part(p, o, lang, tokens, n_nearest, asked, alike.get(p.index), chunks)
        nearest.extend(near)
        reasons.append(text if len(parts) == 1 else f"({p.index + 1}) {p.question}: {text}")
    if absent:
        reasons.append(reason_text(DOCUMENT_NOT_IN_CORPUS, lang, absent))
    if unmentioned:
        reasons.append(unmentioned_text(unmentioned, lang))
    return Result("refusal", question, lang, tuple(claims), outcomes, conflicts,
                  reason_code=refused[0][1].reason, reason=" ".join(reasons), missing_categories=missing,
                  nearest=tuple(nearest), retried=retried, trace_id=trace_id, not_in_corpus=absent, as_of=dated,
                  documents=documents, unmentioned=unmentioned)


def _refused_part(p: PartTrace, o: PartOutcome, lang: str, tokens: Callable[[str], frozenset[str]], n_nearest: int,
                  asked: frozenset[str], alike: tuple[VerifiedClaim, list[OtherSubject]] | None,
                  chunks: Mapping[str, Chunk]) -> tuple[str, list[NearestRecord]]:
    """A refused part's reason in words and its nearest records: the best its last attempt found, one per document;
    for a part refused as one subject's among several (`alike`: its lead claim and the others), the lead's record and
    theirs, so the reader sees each subject's sentence and picks."""
    last = p.attempts[-1]
    by_id = {c.chunk.chunk_id: c for c in last.candidates}
    if alike is not None:
        lead, others = alike
        first = [by_id[i] for i in (stated_citation(lead).chunk_id,) if i in by_id]
        near = nearest_records([replace(c, dropped=None) for c in (*first, *(x.candidate for x in others))],
                               n_nearest, terms=p.attempts[0].query.terms, tokens=tokens, asked=asked)
        return reason_text(SEVERAL_SUBJECTS, lang, [subjects_listing(lead, others, chunks, lang)]), near
    ranked = dict.fromkeys([*last.reranked, *last.referenced])  # referenced ones after every reranked one
    near = nearest_records([by_id[i] for i in ranked if i in by_id], n_nearest, terms=p.attempts[0].query.terms,
                           tokens=tokens, asked=asked)
    text = reason_text(o.reason or "", lang, o.missing_categories)
    if o.reason == NO_SUPPORTED_CLAIMS and near:
        text += " " + nearest_text(near, lang)
    return text, near


def explain(result: Result, lang: str = "en") -> str:
    """One sentence for the trace: the decision and why (the trace file records it in English; the trace page says
    it in the page's language)."""
    supported = sum(c.status == "supported" for c in result.claims)
    demoted = len(result.claims) - supported
    if result.outcome == "answer":
        if lang == "id":
            return (f"terjawab: {supported} klaim didukung, {demoted} diturunkan, setiap bagian memenuhi bukti "
                    f"wajibnya{' setelah satu kali kueri ulang' if result.retried else ''}")
        return (f"answered: {supported} supported claim(s), {demoted} demoted, every part satisfied its required "
                f"evidence{' after a corrective retry' if result.retried else ''}")
    return f"{'ditolak' if lang == 'id' else 'refused'} ({result.reason_code}): {result.reason}"
