"""Lexical analysis: Indonesian and English analysers, query normalisation, glossary.

The lexical lane and the coverage measures both see text through these analysers, so a
question and a record meet on the same tokens. A question becomes *term groups*: each
word the user typed, with every form that counts as that word (its stem under both
analysers, its abbreviation expansion, its glossary translation). A record covers a
group when it contains every token of any one of those forms.
"""
from __future__ import annotations

import math
import re
import unicodedata
from functools import lru_cache
from typing import Callable, Iterable, Mapping

import Stemmer
from bm25s.stopwords import STOPWORDS_EN_PLUS
from Sastrawi.Stemmer.StemmerFactory import StemmerFactory
from Sastrawi.StopWordRemover.StopWordRemoverFactory import StopWordRemoverFactory

from .config import AnalysisRules, Glossary, Normalisation, Profile
from .text import detect_language, fold_lookalikes
from .types import Term

_TOKEN = re.compile(r"[0-9]+(?:[.,/][0-9]+)*|[^\W\d_]+(?:-[^\W\d_]+)*")


def raw_tokens(text: str) -> list[str]:
    """Lowercased word and number tokens; hyphenated words ("undang-undang") stay whole."""
    return _TOKEN.findall(unicodedata.normalize("NFKC", text).lower())


@lru_cache(maxsize=1)
def _sastrawi():
    """Sastrawi's stemmer (one per process: it loads a 30,000-word dictionary of Indonesian roots)."""
    return StemmerFactory().create_stemmer()


def _known(word: str) -> bool:
    """An Indonesian word, or a word whose stem is one, by Sastrawi's dictionary of roots."""
    stemmer = _sastrawi()
    lexicon = stemmer.delegatedStemmer.dictionary
    return lexicon.contains(word) or lexicon.contains(stemmer.stem(word))


_SWAP = {"i": "l", "l": "i"}


@lru_cache(maxsize=200_000)
def ocr_initial(word: str) -> str:
    """A lowercased word with its first letter read back where a scan's OCR swapped a capital I and a
    lower-case l: "luran" -> "iuran" (Iuran), "lzin" -> "izin", "iembaran" -> "lembaran". Only a word
    Indonesian does not know whose swapped form it does know changes; every other word is returned as it
    is. In the PPs of 2010-2023 (github mblonyox/data-peraturan, c87e616) "lzin" stands 413 times beside
    7,555 "izin", "lndonesia" 79 times; PP 44/2015 of the legal_qa dev split writes "luran" 68 times and
    "Iuran" twice, while its questions ask about "iuran"."""
    if len(word) < 3 or word[0] not in _SWAP or not word.isalpha() or _known(word):
        return word
    swapped = _SWAP[word[0]] + word[1:]
    return swapped if _known(swapped) else word


class Analyzer:
    """Tokenise, drop stop words, stem. One instance per language."""

    def __init__(self, lang: str, stopwords: Iterable[str], stem, overrides: Mapping[str, str] | None = None,
                 keywords: Iterable[str] = (), repair: Callable[[str], str] | None = None):
        self.lang = lang
        self._repair = repair or (lambda w: w)  # a word as it was before a scan misread it (ocr_initial)
        self.stopwords = frozenset(stopwords)
        self._stem = stem
        self._overrides = dict(overrides or {})
        self._keywords = frozenset(keywords)
        self._cached = lru_cache(maxsize=200_000)(self._stem_word)

    def _stem_word(self, word: str) -> str:
        if word in self._overrides:
            return self._overrides[word]
        if word in self._keywords or word[0].isdigit():
            return word
        if "-" in word:  # reduplication and compounds: stem each part
            return "-".join(self._stem_word(p) for p in word.split("-") if p)
        stem = self._stem(word) or word
        # a stem that is a function word ("dapat", "aku") says less than the word did
        return word if stem in self.stopwords else stem

    def stem(self, word: str) -> str:
        return self._cached(self._repair(word))

    def is_stopword(self, word: str) -> bool:
        return self._repair(word) in self.stopwords

    def tokens(self, text: str) -> list[str]:
        words = (self._repair(w) for w in raw_tokens(text))
        return [self._cached(w) for w in words if w.isdigit() or (w not in self.stopwords and len(w) > 1)]


def build_analyzers(rules: AnalysisRules) -> dict[str, Analyzer]:
    """The Indonesian (Sastrawi) and English (Snowball) analysers, with the project's rules."""
    sastrawi = _sastrawi()
    keep = set(rules.id_not_stopwords)
    id_stop = (set(StopWordRemoverFactory().get_stop_words()) | set(rules.id_extra_stopwords)) - keep
    snowball = Stemmer.Stemmer("english")
    en_stop = set(STOPWORDS_EN_PLUS) | set(rules.en_extra_stopwords)
    return {
        "id": Analyzer("id", id_stop, sastrawi.stem, rules.id_stem_overrides, rules.id_keywords, repair=ocr_initial),
        "en": Analyzer("en", en_stop, snowball.stemWord),
    }


def coverage(groups: Iterable[Term], tokens: set[str] | frozenset[str]) -> float:
    """Weighted share of the groups that `tokens` covers (0 when there is nothing to cover)."""
    groups = list(groups)
    total = sum(g.weight for g in groups)
    if total <= 0:
        return 0.0
    return sum(g.weight for g in groups if g.matched_by(tokens)) / total


def query_analyzer(profile: Profile) -> QueryAnalyzer:
    """The question analyser a profile defines: its analysers, glossary and normalisation."""
    return QueryAnalyzer(build_analyzers(profile.analysis), profile.glossary, profile.normalisation)


class QueryAnalyzer:
    """Turns a question into normalised text and weighted term groups."""

    def __init__(self, analyzers: Mapping[str, Analyzer], glossary: Glossary, normalisation: Normalisation):
        self.analyzers = analyzers
        self.glossary = glossary
        self.normalisation = normalisation
        self._variants = [(re.compile(rf"\b{re.escape(k)}\b", re.IGNORECASE), v)
                          for k, v in sorted(normalisation.variants.items(), key=lambda kv: -len(kv[0]))]
        en = analyzers["en"]
        self._en_phrases = sorted((k for k in glossary.en_to_id if " " in k), key=len, reverse=True)
        self._en_by_stem: dict[str, str] = {}
        for k in glossary.en_to_id:
            if " " not in k:
                self._en_by_stem.setdefault(en.stem(k), k)

    def normalise(self, question: str) -> str:
        """NFKC, format characters (zero-width space, soft hyphen, …) dropped, Cyrillic/Greek
        look-alikes inside Latin words made Latin, whitespace folded, spelling variants
        replaced by their canonical form."""
        text = " ".join(fold_lookalikes(question).split())
        for pattern, canonical in self._variants:
            text = pattern.sub(canonical, text)
        return text

    def language(self, question: str) -> str:
        return detect_language(question)

    def all_tokens(self, text: str) -> frozenset[str]:
        """Tokens of `text` under every analyser: what coverage is measured against."""
        return frozenset(t for a in self.analyzers.values() for t in a.tokens(text))

    def _forms(self, phrase: str) -> list[tuple[str, ...]]:
        """The phrase analysed by each analyser (deduplicated, empty ones dropped)."""
        out = []
        for a in self.analyzers.values():
            toks = tuple(a.stem(w) for w in raw_tokens(phrase) if not a.is_stopword(w) or w.isdigit())
            if toks and toks not in out:
                out.append(toks)
        return out

    def term_groups(self, normalised: str, lang: str) -> list[Term]:
        """Content words of the question, each with its expansions, in question order."""
        analyzer = self.analyzers.get(lang, self.analyzers["id"])
        words = raw_tokens(normalised)
        groups: list[Term] = []
        i = 0
        while i < len(words):
            # English multi-word glossary entries first ("income tax" -> "pajak penghasilan")
            matched = None
            if lang == "en":
                for phrase in self._en_phrases:
                    n = len(phrase.split())
                    if words[i:i + n] == phrase.split():
                        matched = (phrase, n)
                        break
            if matched:
                phrase, n = matched
                groups.append(self._group(phrase, self.glossary.en_to_id[phrase]))
                i += n
                continue
            w = words[i]
            i += 1
            if analyzer.is_stopword(w) and not w.isdigit():
                continue
            if len(w) < 2 and not w.isdigit():
                continue
            expansions: list[str] = list(self.glossary.synonyms.get(w, ()))
            abbr = self.normalisation.abbreviations.get(w)
            if abbr:
                expansions.append(abbr)
            if lang == "en":
                key = w if w in self.glossary.en_to_id else self._en_by_stem.get(self.analyzers["en"].stem(w))
                if key:
                    expansions.extend(self.glossary.en_to_id[key])
            else:
                expansions.extend(self.glossary.id_to_en.get(w, ()))
            groups.append(self._group(w, expansions))
        # the same concept asked twice counts once
        unique: dict[tuple, Term] = {}
        for g in groups:
            unique.setdefault(g.alternatives, g)
        return list(unique.values())

    def _group(self, term: str, expansions: Iterable[str]) -> Term:
        expansions = tuple(dict.fromkeys(expansions))
        alts: list[tuple[str, ...]] = []
        for phrase in (term, *expansions):
            for form in self._forms(phrase):
                if form not in alts:
                    alts.append(form)
        return Term(term=term, alternatives=tuple(alts), weight=1.0, expansions=expansions)


def weigh(groups: Iterable[Term], idf: Mapping[str, float], unseen: float) -> list[Term]:
    """Weight each group by the rarity of the concept in the corpus.

    A group weighs the lowest idf among its alternatives that the corpus contains (the
    concept is as common as its most common form); a group none of whose forms occurs
    anywhere weighs `unseen` (the corpus's highest idf): a concept no record mentions is
    exactly what must not be glossed over.
    """
    out = []
    for g in groups:
        seen = [sum(idf[t] for t in alt) / len(alt) for alt in g.alternatives if alt and all(t in idf for t in alt)]
        weight = min(seen) if seen else unseen
        out.append(Term(g.term, g.alternatives, round(max(weight, 1e-6), 6), g.expansions, unseen=not seen))
    return out


def bm25_idf(doc_freq: int, n_docs: int) -> float:
    """Lucene's BM25 idf, always positive."""
    return math.log(1 + (n_docs - doc_freq + 0.5) / (doc_freq + 0.5))
