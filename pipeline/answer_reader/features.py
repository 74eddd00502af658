"""What the reader reads of one candidate sentence: a fixed vector of named features.

Four groups, every one computable from the generation request alone (so training, the
generator and replay see the same numbers):

- **coverage**: how much of the question's weighted terms the sentence states, on its own,
  with its record's labels, with the rest of its passage, and with the spans its
  cross-references resolve to ("sebagaimana dimaksud dalam Pasal 2" reads Pasal 2 too);
  the heaviest term it misses; whether the question's terms appear in order and close;
- **answer type**: what the question asks for (kapan, berapa, berapa lama, siapa, di mana,
  apa yang dimaksud, mengapa, …) against what the sentence states that the question does
  not (a year, a date, a figure, a duration, a name, a place, a definition, a cause);
- **shape**: length, position in its passage, the passage's rank in the context;
- **unit** (reader/answers.py): what kind of answer it is (a sentence, an enumeration's item
  with its lead-in, a whole enumeration, an ayat, a Pasal), how much of the question its
  lead-in states and how much only its item does, whether it defines the term the question
  asks about, its place in its enumeration, and whether the question asks for a list;
- **context**: how the sentence compares with the best of the other candidates.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np

from ..definitions import asked_term, defines, entry_of, resolve_asked
from ..text import detect_language
from ..types import ContextItem, Term
from .answers import KINDS, AnswerCandidate

# --- what the question asks for --------------------------------------------------------

QUESTION_TYPES = ("when", "duration", "number", "who", "where", "definition", "why", "how", "which", "yesno",
                  "what", "other")
_QTYPE_RULES: tuple[tuple[str, re.Pattern], ...] = tuple((name, re.compile(p, re.IGNORECASE)) for name, p in (
    ("duration", r"\bberapa\s+lama\b|\bhow\s+long\b|\bsampai\s+kapan\b|\bjangka\s+waktu\b"),
    ("when", r"\bkapan(kah)?\b|\b(tahun|tanggal|bulan|abad)\s+(berapa|ke\s*berapa)\b|\bwhen\b|\bwhat\s+(year|date)\b"
             r"|\bsejak\s+kapan\b"),
    ("number", r"\bberapa(kah)?\b|\bhow\s+(many|much|large|big|tall|high|old)\b|\bwhat\s+percent"),
    ("who", r"\bsiapa(kah)?\b|\bwho(m|se)?\b"),
    ("where", r"\bdi\s*mana(kah)?\b|\bke\s*mana\b|\bdari\s*mana\b|\bwhere\b"),
    ("definition", r"\bapa\s+(itu|yang\s+dimaksud|arti|pengertian|kepanjangan)\b|\byang\s+dimaksud\s+dengan\b"
                   r"|\bwhat\s+(is|are|does)\b.*\bmean|\bdefin"),
    ("why", r"\bmengapa\b|\bkenapa\b|\bwhy\b"),
    ("how", r"\bbagaimana(kah)?\b|\bhow\b"),
    ("which", r"\bmana(kah)?\b|\byang\s+mana\b|\bwhich\b"),
    ("yesno", r"^\s*(apakah|is|are|does|do|can|must|may|should|shall)\b"),
    ("what", r"\bapa(kah)?\b|\bwhat\b"),
))


def question_type(question: str) -> str:
    for name, pattern in _QTYPE_RULES:
        if pattern.search(question):
            return name
    return "other"


# --- what a sentence states ------------------------------------------------------------

_MONTHS = ("januari|februari|maret|april|mei|juni|juli|agustus|september|oktober|november|desember|january|february"
           "|march|may|june|july|august|october|december")
_YEAR = re.compile(r"\b(1[0-9]{3}|20[0-9]{2})\b")
_DATE = re.compile(rf"\b\d{{1,2}}\s+({_MONTHS})\b", re.IGNORECASE)
_MONTH = re.compile(rf"\b({_MONTHS})\b", re.IGNORECASE)
_NUMBER = re.compile(r"\d|\b(satu|dua|tiga|empat|lima|enam|tujuh|delapan|sembilan|sepuluh|sebelas|seratus|seribu"
                     r"|puluh|belas|ratus|ribu|juta|miliar|triliun|one|two|three|four|five|six|seven|eight|nine|ten"
                     r"|hundred|thousand|million|billion)\b", re.IGNORECASE)
_DURATION = re.compile(r"\b(\d+|satu|dua|tiga|empat|lima|enam|tujuh|delapan|sembilan|sepuluh|sebelas|\w+\s+puluh|"
                       r"\w+\s+belas)\s*(\(\s*[\w\s]+\)\s*)?(detik|menit|jam|hari|minggu|pekan|bulan|tahun|abad|"
                       r"seconds?|minutes?|hours?|days?|weeks?|months?|years?|centur(y|ies))\b"
                       r"|\b(selama|paling\s+lama|paling\s+lambat|sejak|terhitung|hingga|sampai\s+dengan|within|for)\b",
                       re.IGNORECASE)
_PERCENT = re.compile(r"\d\s*%|\bpersen\b|\bpercent\b", re.IGNORECASE)
_MONEY = re.compile(r"\bRp\.?\s?\d|\brupiah\b|\bUS\$|\bdolar\b|\bdollars?\b", re.IGNORECASE)
_DEFINITION = re.compile(r"\b(adalah|merupakan|ialah|yaitu|yakni|disebut|dikenal\s+(sebagai|dengan)|berarti"
                         r"|singkatan|kepanjangan|means|is\s+defined|refers\s+to)\b", re.IGNORECASE)
_PLACE = re.compile(r"\b(di|ke|dari)\s+[A-Z]|\b(kota|kabupaten|provinsi|negara|pulau|desa|kecamatan|terletak|berada"
                    r"|wilayah|daerah|benua|located|city|province|country|island)\b")
_REASON = re.compile(r"\b(karena|sebab|disebabkan|akibat|sehingga|oleh\s+karena|agar|supaya|because|due\s+to"
                     r"|caused)\b", re.IGNORECASE)
_PERSON = re.compile(r"\b(oleh|lahir|putra|putri|anak|istri|suami|raja|ratu|presiden|menteri|pendiri|didirikan"
                     r"|tokoh|pemimpin|dipimpin|born|founded|son|daughter|king|president)\b", re.IGNORECASE)
_CAPITAL = re.compile(r"(?<![.!?]\s)(?<!^)\b[A-Z][\w'-]+")
_NEGATION = re.compile(r"\b(tidak|bukan|tanpa|belum|tak|tiada|not|no|never|without|cannot)\b", re.IGNORECASE)
_EXCLUSION = re.compile(r"\b(selain|kecuali|bukan|other\s+than|except|besides)\b", re.IGNORECASE)
_SUPERLATIVE = re.compile(r"\b(paling\s+\w+|pertama|terakhir|ter[a-z]{3,}|first|last|most\s+\w+|\w+est)\b",
                          re.IGNORECASE)
_COPULA = re.compile(r"\b(adalah|merupakan|ialah|yaitu|yakni|is|are|was|were|means)\b", re.IGNORECASE)
_WORD = re.compile(r"\w+", re.UNICODE)
# a question that asks for every member of a list, or how many there are
_ASKS_LIST = re.compile(r"\b(apa|siapa|mana|bagaimana)\s+saja\b|\bsaja\s+(apa|yang)\b|\bmeliputi\s+apa\b"
                        r"|\bterdiri\s+(atas|dari)\s+apa\b|\bsebutkan\b|\bwhat\s+are\s+the\b|\bwhich\s+\w+\s+are\b"
                        r"|\blist\b|\bwhat\s+(do|does)\s+.*\b(include|consist|cover|comprise)", re.IGNORECASE)
_ASKS_COUNT = re.compile(r"\bada\s+berapa\b|\bberapa\s+(macam|jenis|tingkat|kategori|kelompok|bentuk|golongan)\b"
                         r"|\bhow\s+many\s+(kinds|types|levels|categories|groups)\b", re.IGNORECASE)
_LIST_LABEL = re.compile(r"^\s*(?:\(\w{1,3}\)|\w{1,3}[.)])\s+")
_PASAL_ONE = re.compile(r"^(?:Pasal|Article)\s+1(?:\b|$)(?!\d)")

FEATURES: tuple[str, ...] = (
    # coverage
    "coverage", "coverage_own", "coverage_with_refs", "coverage_terms", "coverage_passage",
    "missing_heaviest", "missing_share_own", "n_terms", "n_missing", "terms_in_order", "match_window",
    "title_coverage", "coverage_names", "coverage_other", "first_term", "last_term", "pairs_adjacent",
    "subject_coverage", "passage_best", "negation_mismatch", "q_exclusion", "superlative_missing",
    # answer type: the question's, the sentence's, and the two together
    *(f"q_{t}" for t in QUESTION_TYPES),
    "s_year", "s_date", "s_number", "s_duration", "s_percent", "s_money", "s_definition", "s_place", "s_reason",
    "s_person", "s_capitals",
    "novel_words", "novel_share", "novel_capitals", "novel_numbers", "novel_years", "type_match",
    # shape
    "log_chars", "sentence_index", "is_first", "item_rank", "item_share",
    # unit
    *(f"k_{k}" for k in KINDS), "regulation", "lead_coverage", "body_coverage", "body_only_coverage",
    "defines", "defines_term", "defines_asked", "list_items", "list_position", "last_in_list", "q_list", "q_count", "in_pasal_1", "q_english",
    # context
    "coverage_gap_best", "coverage_rank", "n_candidates", "n_full_coverage", "same_item_best",
)
_CONTEXT_FEATURES = 5  # the last five are computed over all candidates together


@dataclass(frozen=True)
class AnswerView:
    """One candidate as the features read it."""

    text: str              # the quote (a unit's pieces joined with answers.ELISION)
    item: int              # its context item (rank in the context, 0 = best)
    index: int             # the sentence of the item it starts in
    item_text: str         # the whole chunk
    label: str             # the record's title, heading and location
    referenced: str = ""   # the text of the spans its resolved cross-references point at
    kind: str = "sentence"  # answers.KINDS
    lead: str = ""         # an item's or enumeration's lead-in
    body: str = ""         # the part that answers beyond the lead-in ("" = the text)
    items: int = 0         # items of its enumeration
    position: int = 0      # an item's place in it
    regulation: bool = False  # its chunk is a regulation's provision (types.is_provision)
    location: str = ""     # its chunk's location ("Pasal 1", "Pasal 3 ayat (1)–(2)")


def answer_view(c: AnswerCandidate, item: ContextItem, referenced: str = "") -> AnswerView:
    """A candidate as the features read it: the generator's and the training's one way."""
    return AnswerView(c.quote, c.item, c.index, item.text, f"{item.document} {item.heading} {item.location}",
                      referenced, c.kind, c.lead, c.body, c.items, c.position, item.provision, item.location)


def _capitals(text: str) -> set[str]:
    return {m.group(0).casefold() for m in _CAPITAL.finditer(text)}


def _weighted(terms: Sequence[Term], *token_sets: frozenset[str]) -> float:
    total = sum(t.weight for t in terms)
    if total <= 0:
        return 0.0
    return sum(t.weight for t in terms if any(t.matched_by(s) for s in token_sets)) / total


def _order_and_window(terms: Sequence[Term], word_tokens: Sequence[frozenset[str]]) -> tuple[float, float]:
    """Whether the matched terms come in the question's order, and how tightly (matched/window)."""
    first: dict[str, int] = {}
    for i, toks in enumerate(word_tokens):
        for tok in toks:
            first.setdefault(tok, i)
    positions = []
    for t in terms:
        at = [max(first[tok] for tok in alt) for alt in t.alternatives if alt and all(tok in first for tok in alt)]
        if at:
            positions.append(min(at))
    if len(positions) < 2:
        return (1.0 if positions else 0.0), (1.0 if positions else 0.0)
    ordered = sum(1 for a, b in zip(positions, positions[1:]) if b > a) / (len(positions) - 1)
    window = max(positions) - min(positions) + 1
    return ordered, len(positions) / window


def _is_name(term: str, question: str) -> bool:
    """The question writes the term capitalised (not as its first word) or as a figure: a name, a date, a number."""
    if any(ch.isdigit() for ch in term):
        return True
    for m in re.finditer(rf"\b{re.escape(term)}\b", question, re.IGNORECASE):
        if m.start() > 0 and question[m.start()].isupper():
            return True
    return False


def _superlative_missing(question: str, sentence: str) -> float:
    """The question asks for a superlative or an ordinal ("terbesar", "paling tua", "pertama") the sentence never says."""
    asked = {m.group(0).casefold() for m in _SUPERLATIVE.finditer(question)}
    said = sentence.casefold()
    return float(any(a not in said for a in asked))


def _share(weights: np.ndarray, said: np.ndarray, which: np.ndarray) -> float:
    """Weighted share of the `which` terms the sentence states (1 when there are none)."""
    total = float(weights[which].sum())
    return float(weights[which & said].sum()) / total if total > 0 else 1.0


def _adjacent_pairs(pairs: Sequence[tuple[Term, Term]], word_tokens: Sequence[frozenset[str]]) -> int:
    """Consecutive question terms that also stand next to each other (within two words) in the sentence."""
    where: dict[str, list[int]] = {}
    for i, toks in enumerate(word_tokens):
        for tok in toks:
            where.setdefault(tok, []).append(i)

    def spots(t: Term) -> set[int]:
        return {i for alt in t.alternatives if alt for tok in alt[:1] for i in where.get(tok, ())}
    got = 0
    for a, b in pairs:
        sa, sb = spots(a), spots(b)
        if any(0 < j - i <= 3 or 0 < i - j <= 3 for i in sa for j in sb):
            got += 1
    return got


@dataclass(frozen=True)
class _Question:
    """What every candidate's row reads of the question, worked out once per request."""

    text: str
    terms: Sequence[Term]
    qtype: str
    tokens: frozenset[str]
    words: frozenset[str]
    names: np.ndarray  # per term: written as a name or a figure
    negated: bool
    excludes: bool
    asks_list: bool
    asks_count: bool
    asked: str | None  # the term a definition question asks about (definitions.asked_term)
    english: bool      # asked in English (of Indonesian text, its words meet the text through the glossary)

    @classmethod
    def of(cls, question: str, terms: Sequence[Term], tokens: Callable[[str], frozenset[str]],
           asked: str | None = None) -> "_Question":
        # what the question says includes what its terms translate to: an English question's "wage" is the
        # text's "upah", so "upah" is not a word the answer adds (features must not need shared words)
        said = tokens(question) | frozenset(tok for t in terms for alt in t.alternatives for tok in alt)
        return cls(question, terms, question_type(question), said,
                   frozenset(w.casefold() for w in _WORD.findall(question)),
                   np.array([_is_name(t.term, question) for t in terms], dtype=bool),
                   bool(_NEGATION.search(question)), bool(_EXCLUSION.search(question)),
                   bool(_ASKS_LIST.search(question)), bool(_ASKS_COUNT.search(question)),
                   asked or asked_term(question),
                   detect_language(question) == "en")


class Featurizer:
    """Turns (question, terms, candidate sentences) into the FEATURES matrix."""

    def __init__(self, tokens: Callable[[str], frozenset[str]], label_credit: float, passage_credit: float):
        self._analyse = tokens
        self.label_credit = label_credit
        self.passage_credit = passage_credit
        self._cache: dict[str, frozenset[str]] = {}  # texts and words: a passage is analysed once per request

    def tokens(self, text: str) -> frozenset[str]:
        """The analysed tokens of a text or a word, from a bounded cache."""
        got = self._cache.get(text)
        if got is None:
            if len(self._cache) > 50000:
                self._cache.clear()
            got = self._cache[text] = self._analyse(text)
        return got

    def _match(self, terms: Sequence[Term], v: AnswerView) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Per term: stated by the sentence, by a span it refers to, by the record's labels, by its
        passage; and the credit each earns for coverage (own and referenced words in full, label
        and passage words in part)."""
        own, label, item = self.tokens(v.text), self.tokens(v.label), self.tokens(v.item_text)
        refs = self.tokens(v.referenced) if v.referenced else frozenset()
        weights = np.array([t.weight for t in terms], dtype=np.float64)
        m = np.array([(t.matched_by(own), t.matched_by(refs), t.matched_by(label), t.matched_by(item))
                      for t in terms], dtype=bool).reshape(len(terms), 4)
        said = m[:, 0] | m[:, 1]
        credit = np.where(said, 1.0, np.where(m[:, 2], self.label_credit,
                                              np.where(m[:, 3] & (self.passage_credit > 0), self.passage_credit, 0.0)))
        return weights, m, credit

    @staticmethod
    def _coverage(weights: np.ndarray, credit: np.ndarray) -> float:
        total = float(weights.sum())
        return float(weights @ credit) / total if total > 0 else 0.0

    def coverage(self, terms: Sequence[Term], v: AnswerView) -> float:
        """The generator's coverage: the weighted share of the question's terms, with credits."""
        weights, _, credit = self._match(terms, v)
        return self._coverage(weights, credit)

    @staticmethod
    def asked_in(question: str, views: Sequence[AnswerView]) -> str | None:
        """The term a definition question asks, as the regulation candidates' definition entries know it
        (definitions.resolve_asked: "Pelanggaran Disiplin PNS" is asked of "Pelanggaran Disiplin adalah
        … PNS …"); None when the question asks no term. Prose sentences that read "X adalah …" are not
        a regulation's definitions: they resolve nothing."""
        asked = asked_term(question)
        if not asked:
            return None
        bodies = (_LIST_LABEL.sub("", v.body or v.text) for v in views if v.regulation)
        return resolve_asked(asked, ((e, b) for b in bodies if (e := entry_of(b)) is not None))

    def matrix(self, question: str, terms: Sequence[Term], views: Sequence[AnswerView],
               min_coverage: float = 0.0, asked: str | None = None) -> tuple[np.ndarray, np.ndarray]:
        """The FEATURES rows of the candidates whose coverage reaches `min_coverage`, and their
        indices in `views`. The context features compare each with every candidate. `asked`: the
        term a definition question asks, when the caller resolved it (asked_in); else as written."""
        matched = [self._match(terms, v) for v in views]
        cov = np.array([self._coverage(w, c) for w, _, c in matched], dtype=np.float64)
        keep = np.flatnonzero(cov >= min_coverage)
        q = _Question.of(question, terms, self.tokens, asked)
        rows = [self._row(q, views[i], matched[i]) for i in keep]
        x = np.asarray(rows, dtype=np.float64).reshape(len(keep), len(FEATURES) - _CONTEXT_FEATURES)
        return np.hstack([x, self._context(x, cov, keep, views)]), keep

    def _row(self, q: "_Question", v: AnswerView, matched: tuple[np.ndarray, np.ndarray, np.ndarray]) -> list[float]:
        question, terms, qtype = q.text, q.terms, q.qtype
        weights, m, credit = matched
        total = float(weights.sum()) or 1.0
        said = m[:, 0] | m[:, 1]
        missing = weights[~said]
        words = [w.casefold() for w in _WORD.findall(v.text)]
        word_tokens = [self.tokens(w) for w in words]
        ordered, window = _order_and_window(terms, word_tokens)
        novel = [w for w, toks in zip(words, word_tokens) if w not in q.words and not (toks & q.tokens)]
        novel_set = set(novel)
        capitals = _capitals(v.text)
        caps_novel = [c for c in capitals if c not in q.words and not (self.tokens(c) & q.tokens)]
        s = {
            "year": bool(_YEAR.search(v.text)), "date": bool(_DATE.search(v.text) or _MONTH.search(v.text)),
            "number": bool(_NUMBER.search(v.text)), "duration": bool(_DURATION.search(v.text)),
            "percent": bool(_PERCENT.search(v.text)), "money": bool(_MONEY.search(v.text)),
            "definition": bool(_DEFINITION.search(v.text)), "place": bool(_PLACE.search(v.text)),
            "reason": bool(_REASON.search(v.text)), "person": bool(_PERSON.search(v.text)),
        }
        novel_numbers = any(any(ch.isdigit() for ch in w) for w in novel_set)
        novel_years = any(_YEAR.fullmatch(w) for w in novel_set)
        match = {
            "when": novel_years or s["date"], "duration": s["duration"], "number": novel_numbers or s["percent"],
            "who": bool(caps_novel), "where": s["place"] or bool(caps_novel), "definition": s["definition"],
            "why": s["reason"], "which": bool(caps_novel),
        }.get(qtype, True)
        n = len(terms)
        copula = _COPULA.search(v.text)
        subject = self.tokens(v.text[:copula.start()]) if copula else frozenset()
        subject_cov = (float(weights[[t.matched_by(subject) for t in terms]].sum()) / total) if copula and n else 0.0
        pairs = [(a, b) for a, b in zip(terms, terms[1:])]
        adjacent = _adjacent_pairs(pairs, word_tokens)
        return [
            float(weights @ credit) / total, float(weights[m[:, 0]].sum()) / total, float(weights[said].sum()) / total,
            (float(said.sum()) / n) if n else 0.0, float(weights[m[:, 3]].sum()) / total,
            (float(missing.max()) / float(weights.max())) if len(missing) else 0.0,
            float(missing.sum()) / total, float(n), float(len(missing)), ordered, window,
            float(weights[m[:, 2]].sum()) / total,
            _share(weights, said, q.names), _share(weights, said, ~q.names),
            float(said[0]) if n else 0.0, float(said[-1]) if n else 0.0,
            (adjacent / len(pairs)) if pairs else 0.0, subject_cov, 0.0,
            float(q.negated != bool(_NEGATION.search(v.text))),
            float(q.excludes), _superlative_missing(question, v.text),
            *(float(qtype == t) for t in QUESTION_TYPES),
            *(float(s[k]) for k in ("year", "date", "number", "duration", "percent", "money", "definition", "place",
                                   "reason", "person")),
            float(len(capitals)),
            float(len(novel)), len(novel) / max(1, len(words)), float(len(caps_novel)), float(novel_numbers),
            float(novel_years), float(bool(match)),
            float(np.log1p(len(v.text))), float(v.index), float(v.index == 0), float(v.item), 0.0,
            *self._unit(q, v, weights, m[:, 0]),
        ]

    def _unit(self, q: "_Question", v: AnswerView, weights: np.ndarray, own: np.ndarray) -> list[float]:
        """The unit group: kind, lead-in against item, definition, place in its list, the question's ask.
        `own`: per term, stated by the candidate's own words."""
        terms = q.terms
        total = float(weights.sum()) or 1.0
        body = v.body or v.text

        def stated(text: str) -> np.ndarray:
            toks = self.tokens(text)
            return np.array([t.matched_by(toks) for t in terms], dtype=bool)
        none = np.zeros(len(terms), dtype=bool)
        by_lead = stated(v.lead) if v.lead else none
        by_body = own if body == v.text else stated(body)
        entry = entry_of(_LIST_LABEL.sub("", body))
        by_term = stated(" ".join(entry.keys)) if entry else none
        n = len(terms)
        return [
            *(float(v.kind == k) for k in KINDS), float(v.regulation),
            float(weights[by_lead].sum()) / total if n else 0.0, float(weights[by_body].sum()) / total if n else 0.0,
            float(weights[by_body & ~by_lead].sum()) / total if n else 0.0,
            float(bool(entry)), float(weights[by_term].sum()) / total if (entry and n) else 0.0,
            float(defines(entry, q.asked)),
            float(np.log1p(v.items)), (v.position / v.items) if v.items else 0.0,
            float(bool(v.items) and v.position == v.items), float(q.asks_list), float(q.asks_count),
            float(bool(_PASAL_ONE.match(v.location))), float(q.english),
        ]

    @staticmethod
    def _context(x: np.ndarray, cov_all: np.ndarray, keep: np.ndarray, views: Sequence[AnswerView]) -> np.ndarray:
        """Each kept sentence against every candidate: the gap to the best coverage, its rank, how crowded."""
        n = len(views)
        if n == 0 or len(keep) == 0:
            return np.zeros((len(keep), _CONTEXT_FEATURES))
        best = cov_all.max()
        order = (-cov_all).argsort(kind="stable")
        rank = np.empty(n)
        rank[order] = np.arange(n)
        items = np.array([v.item for v in views])
        item_best: dict[int, float] = {}
        for i, it in enumerate(items.tolist()):
            item_best[it] = max(item_best.get(it, 0.0), cov_all[i])
        kept_items = items[keep].tolist()
        x[:, FEATURES.index("item_share")] = items[keep] / max(1, items.max())
        x[:, FEATURES.index("passage_best")] = [item_best[it] for it in kept_items]
        cov = cov_all[keep]
        same_best = np.array([float(c >= item_best[it]) for c, it in zip(cov, kept_items)])
        return np.column_stack([best - cov, rank[keep], np.full(len(keep), float(n)),
                                np.full(len(keep), float((cov_all >= 0.999).sum())), same_best])
