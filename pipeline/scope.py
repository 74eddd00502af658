"""A question's scope: the documents it names, and whether it asks *within* them.

"Menurut PMK 98/2025, …", "berdasarkan …", "according to PP 34/2011, …", "… dalam PMK 98/2025"
ask within a document, and so does a question about when the document itself takes effect
("Kapan PMK 99/2025 mulai berlaku?", "When does PP 35/2021 come into force?": its closing
provision answers, not another document's): retrieval is then restricted to the named
documents the corpus holds, their names (and the title a question gives with one, "PMK
99/2025 tentang …") are not content an answer must cover, and a named document the corpus
lacks leaves nothing to answer from. A question about a relation between documents (revoked,
amended, replaced) is never restricted: the answer may be in the other document. A document
merely mentioned is only recorded, so an answer drawn from other records is never taken for
its. Document names are read with the same grammar ingest uses for cross-references
(`references.py`), so a question and a regulation name a document alike. Any named document
the corpus holds is also exempt from retrieval's per-source cap: the question is about its
passages, so all of them it finds go to the reranker.

A question that names no document by citation may name one by what it is about ("in the Mamuju
Tengah regional government accounting regulation", `described_scope`), or the place of regional
instruments ("… di Kabupaten Kotabaru", `places_scope`).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Sequence

from .document_names import issuer_place
from .references import Reference, documents_named, held_by
from .context import ContextSource
from .protocols import ChunkSource
from .types import Document

if TYPE_CHECKING:
    from .analysis import QueryAnalyzer

# "menurut PMK 98/2025", "berdasarkan …", "sesuai dengan …", "according to …", "under …": the question asks within
# that document, not about it (even a question about a relation between documents)
_EXPLICIT = r"menurut|berdasarkan|sesuai(?:\s+dengan)?|according\s+to|under|pursuant\s+to"
# "dalam …", "in …": within it too, unless the question is about a relation between documents
_IN = r"(?:di\s+)?dalam|in|within"
_SCOPE_WORD = re.compile(rf"\b(?:{_EXPLICIT}|{_IN})\s*$", re.IGNORECASE)
_EXPLICIT_WORD = re.compile(rf"\b(?:{_EXPLICIT})\s*$", re.IGNORECASE)
# a document named right after a scoped one ("dalam PMK 3/2022 dan PMK 7/2025") is scoped with it
_JOINED = re.compile(r"^\s*(?:,|dan|and|atau|or|serta)\s*$", re.IGNORECASE)
# the document's own force is what is asked ("Kapan PMK 99/2025 mulai berlaku?"): its closing provision says it. Not
# the date it was made ("Kapan … diundangkan?", _MAKING): that is in its signature block, and scoped to a document
# the corpus holds, a question cut down to "Kapan diundangkan?" was read into "… mulai berlaku setelah 10 hari
# terhitung sejak tanggal diundangkan" at TINGGI
_OWN_FORCE = re.compile(r"\bberlaku\s*(?:\?|$)|\b(?:mulai\s+berlaku|berlaku\s+(?:sejak|mulai)|takes?\s+effect|"
                        r"(?:comes?|come|came|enters?|enter|entered)\s+into\s+(?:force|effect)|"
                        r"(?:becomes?|become|became)\s+effective|effective\s+date)\b", re.IGNORECASE)
# when the document was made: in its signature block. A question about a document the corpus lacks has nothing to
# answer from; about one it holds it is left unscoped (see _OWN_FORCE)
_MAKING = re.compile(r"\b(?:ditetapkan|diundangkan|diterbitkan|disahkan|ditandatangani|enacted|issued|signed|promulgated|"
                     r"stipulated)\b", re.IGNORECASE)
# a relation between documents: the answer may be in the other one ("Kapan PMK 3/2022 dicabut?")
_RELATION = re.compile(r"\b(?:dicabut|mencabut|pencabutan|diubah|mengubah|perubahan|diganti|mengganti|penggantian|"
                       r"revok(?:e|ed|es|ing)|repeal(?:ed|s|ing)?|amend(?:ed|s|ing|ment|ments)?|"
                       r"replac(?:e|ed|es|ing)|supersed(?:e|ed|es|ing)|chang(?:e|ed|es)|melaksanakan|pelaksanaan|"
                       r"implement(?:s|ed|ing)?|masih\s+berlaku|still\s+(?:in\s+force|valid|appl(?:y|ies))|"
                       r"terjadi\s+(?:pada|dengan|terhadap)|happens?\s+to|"
                       # a transitional provision: "pada saat Peraturan Pemerintah ini mulai berlaku, PP 53/2010 …"
                       r"ini\s+mulai\s+berlaku|this\s+\w+\s+(?:takes\s+effect|comes\s+into\s+force))\b", re.IGNORECASE)
# the title a question gives with a document's name ("PMK 99/2025 tentang pembebasan …", "… on customs duty …"), up to
# the question's verb (of force, coming, making: any "is …ed"), a clause break or the end
_TITLE = re.compile(r"\s+(?:tentang|mengenai|on|regarding|concerning)\s+.+?(?=\s+(?:mulai\s+berlaku|berlaku|"
                    r"takes?\s+effect|come|comes|came|enters?|enter|becomes?|become|became|ditetapkan|diundangkan|"
                    r"(?:is|was)\s+\w+ed)\b|\s*[,;:?]|\s*$)", re.IGNORECASE)


@dataclass(frozen=True)
class Scope:
    named: tuple[tuple[str, str | None], ...] = ()  # (document label, ingested doc id or None)
    restrict: tuple[str, ...] | None = None          # doc ids retrieval is limited to; None: unrestricted
    strip: tuple[str, ...] = ()                      # the scoping names, left out of the terms to cover
    places: tuple[str, ...] = ()                     # the places of regional instruments the question names

    @property
    def held(self) -> tuple[str, ...]:
        """The ids of the named documents the corpus holds."""
        return tuple(dict.fromkeys(d for _, d in self.named if d))

    def without_names(self, text: str) -> str:
        """The text with the scoping document names taken out (they scope the search)."""
        for raw in self.strip:
            text = " ".join(text.replace(raw, " ").split())
        return text


async def question_scope(question: str, lang: str, chunks: ChunkSource | ContextSource,
                         analyzer: "QueryAnalyzer | None" = None) -> Scope:
    """The documents the question names: by citation, else by description (with `analyzer`), else the place of
    regional instruments (the corpus's documents are looked up only when the question may name any)."""
    named = documents_named(question, lang)
    if not named:
        described = _DESCRIBED.search(question) if analyzer is not None else None
        if not described and not _PROPER.search(question):
            return Scope()
        documents = await chunks.documents()
        scope = described_scope(question, lang, documents, analyzer) if described else Scope()
        return scope if scope.restrict is not None else places_scope(question, documents)
    documents = await chunks.documents()
    held = [(ref, held_by(ref, documents)) for ref in named]
    within = asked_within(question, named)
    making = bool(_MAKING.search(question)) and not _RELATION.search(question)
    scoped = [(ref, doc_id) for (ref, doc_id), inside in zip(held, within) if inside or (making and doc_id is None)]
    return Scope(named=tuple((ref.document_label, doc_id) for ref, doc_id in held),
                 restrict=tuple(sorted({d for _, d in scoped if d})) if scoped else None,
                 strip=tuple(_with_title(question, ref) for ref, _ in scoped))


def asked_within(question: str, named: Sequence[Reference]) -> list[bool]:
    """For each named document (in the order of the text), whether the question asks within it."""
    if _RELATION.search(question):
        # "Kapan PMK 3/2022 dicabut?": the revoking document answers; only an explicit "menurut …" scopes
        return [bool(_EXPLICIT_WORD.search(question[:ref.start])) for ref in named]
    if _OWN_FORCE.search(question):
        return [True] * len(named)
    out: list[bool] = []
    for i, ref in enumerate(named):
        joined = i > 0 and out[-1] and bool(_JOINED.match(question[named[i - 1].end:ref.start]))
        out.append(joined or bool(_SCOPE_WORD.search(question[:ref.start])))
    return out


def _with_title(question: str, ref: Reference) -> str:
    """The name as written, with the title the question gives after it, if any."""
    m = _TITLE.match(question, ref.end)
    return question[ref.start:m.end()] if m else ref.raw


# a capitalised word past the question's first, or an administrative word: it may name a place
_PROPER = re.compile(r"(?<!^)(?<![.?!]\s)\b[A-Z][a-z]|(?i:\b(?:kabupaten|kab\.|kota|provinsi|prov\.|regency|city|"
                     r"province)\b)")
_ADMIN = r"(?:Pemerintah\s+)?(?:Kabupaten|Kab\.|Kota|Provinsi|Prov\.)"
_ADMIN_AFTER = r"(?:Regency|City|Province|Municipality)"


def places_scope(question: str, documents: Sequence[Document]) -> Scope:
    """A question that names the place of regional instruments the corpus holds ("… PNS di Kabupaten Kotabaru",
    "… in Kotabaru Regency") asks about that place: another place's regional instruments may not answer it (the
    worst answer is the right rule of the wrong regency), national ones still may, and the place is not content an
    answer must cover. The place is matched as a whole, capitalised as a name, or after its administrative word in
    any case ("kabupaten kotabaru")."""
    places: dict[str, set[str]] = {}
    for d in documents:
        if place := issuer_place(d.doc_type, d.issuer):
            places.setdefault(place, set()).add(d.doc_id)
    said, raws = set(), []
    for place in sorted(places, key=len, reverse=True):
        words = r"\s+".join(map(re.escape, place.split()))
        named = re.compile(rf"(?:\b{_ADMIN}\s+)?\b{words}\b(?:\s+{_ADMIN_AFTER}\b)?")
        admin = re.compile(rf"\b{_ADMIN}\s+{words}\b(?:\s+{_ADMIN_AFTER}\b)?", re.IGNORECASE)
        m = named.search(question) or admin.search(question)
        if m and not any(place in other for other in said):
            said.add(place)
            raws.append(m[0])
    if not said:
        return Scope()
    elsewhere = set().union(*(ids for place, ids in places.items() if place not in said))
    return Scope(restrict=tuple(sorted(d.doc_id for d in documents if d.doc_id not in elsewhere)),
                 strip=tuple(raws), places=tuple(sorted(said)))


# a document named by what it is about: "in the Mamuju Tengah regional government accounting regulation", "under the
# regulation on imported gifts", "menurut peraturan tentang pembebasan bea masuk"
_KIND = r"(?:regulations?|rules?|decree|ordinance|peraturan(?:\s+(?:menteri(?:\s+keuangan)?|bupati|wali\s*kota|daerah|" \
        r"gubernur|pemerintah))?|ketentuan|PMK|PP|Perpres|Permen|Perbup|Perda|Perwali|Perwal|Pergub|UU)"
_DESCRIBED = re.compile(
    rf"\b(?:in|under|according\s+to|pursuant\s+to|dalam|di\s+dalam|menurut|berdasarkan)\s+(?P<phrase>"
    rf"(?:the|this|that)\s+(?P<before>(?:[\w/-]+\s+){{1,8}}?){_KIND}\b"
    rf"|(?:the\s+)?{_KIND}\s+(?:on|about|concerning|regarding|governing|tentang|mengenai)\s+(?P<after>[^,;:?]+))",
    re.IGNORECASE)
DESCRIBED_SHARE = 0.75  # of the description's terms a document's title and issuer must state


def described_scope(question: str, lang: str, documents: Sequence[Document], analyzer: "QueryAnalyzer") -> Scope:
    """A question that names a document by what it is about: the documents whose title and issuer state at least
    `DESCRIBED_SHARE` of the description's terms (two terms at least), when they state more of it than any other
    document, are the ones asked within, and the description is not content an answer must cover."""
    m = _DESCRIBED.search(question)
    if not m:
        return Scope()
    terms = analyzer.term_groups(analyzer.normalise(m["before"] or m["after"] or ""), lang)
    if len(terms) < 2:
        return Scope()
    shares = {}
    for d in documents:
        stated = analyzer.all_tokens(f"{d.title} {d.issuer or ''}")
        shares[d.doc_id] = sum(t.matched_by(stated) for t in terms) / len(terms)
    best = max(shares.values(), default=0.0)
    if best < DESCRIBED_SHARE:
        return Scope()
    chosen = tuple(sorted(d for d, v in shares.items() if v == best))
    if len(chosen) == len(documents) and len(documents) > 1:
        return Scope()  # it tells no document from another
    return Scope(restrict=chosen, strip=(m["phrase"],))
