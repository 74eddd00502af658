"""Question/answer pairs mined from real laws, for the reader's training.

Each law (the 1,535 Undang-Undang of `peraturan/uu.tar.xz`, and the Government Regulations of a
`pp.tar.xz` built by scripts/pp_archive.py) is read and chunked by the
ingest path itself, and every chunk's candidate answers (reader/answers.py) are offered to a
set of patterns, each of which recognises a kind of provision and asks about it the way
people do — without naming the law, in the words of the provision and around them:

| pattern | provision | asked as |
|---|---|---|
| definition | Pasal 1's "X (yang selanjutnya disingkat Y) adalah …" | "Apa yang dimaksud dengan Y?", "What is meant by …?" |
| enumeration | "… meliputi / terdiri atas / wajib / dilarang / tidak berlaku bagi:" and its items | "… apa saja?", "Sebutkan …", "Ada berapa …?", "Apa yang dimaksud dengan …?" (terdiri atas) |
| item | one item of such a list, with its lead-in | "Apakah … termasuk …?", "… memuat rencana apa?" |
| who | "X dilaksanakan oleh Y", "Menteri menetapkan X" | "Siapa yang melaksanakan X?", "Oleh siapa X …?" |
| obligation / prohibition / permission | "X wajib …", "X dilarang …", "X dapat …" | "Apakah X wajib …?", "Siapa yang dilarang …?", "Bolehkah X …?" |
| duration | "paling lama / paling lambat / dalam jangka waktu N hari" | "Berapa lama …?", "Kapan paling lambat …?" |
| amount | "sebesar N", "N%", "Rp…" | "Berapa besar …?", "Berapa persen …?" |
| sanction | "dipidana dengan …", "dikenai sanksi administratif …" | "Apa sanksi bagi …?" |
| when | "X dilaksanakan pada saat / sejak / setelah Y" | "Kapan X dilaksanakan?" |
| purpose | "X bertujuan untuk …" | "Apa tujuan X?" |
| in_force | "… mulai berlaku pada …" | "Kapan undang-undang tentang … mulai berlaku?" |
| general | a Pasal of several ayat, an ayat of several sentences | "Bagaimana ketentuan mengenai X?", "Bagaimana ketentuan pemberian istirahat panjang?" |
| chapter | a BAB of several Pasal (any of them answers) | "Bagaimana ketentuan mengenai kepesertaan dan tata cara pendaftaran?" |

English questions (one attempt in three; kept where the words translate) are written with the glossary's Indonesian → English
entries where every content word of the asked phrase has one (abbreviations kept), as an
English-speaking user asks about an Indonesian text.

The gold answer is the candidate the pattern read; the reader learns to tell it from the
rest of the context its question meets (the next ayat, the sibling item, the same term in
another law, a Pasal that only mentions it). Everything is seeded by the law and place, so
the same laws give the same questions, byte for byte.
"""
from __future__ import annotations

import functools
import hashlib
import re
import tarfile
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterator

from ..config import Profile
from ..chapters import askable, heading_title
from ..ingest.chunker import Chunker
from ..ingest.source import read_source
from ..types import Chunk, ContextItem
from .answers import answer_candidates
from .mining_words import ENGLISH_SHARE, Translator, _SPACE, _clean, _drop_some, _in_own_words, _pick, _roll
from .mining_patterns import (_amount, _definition, _duration, _enumeration, _general, _in_force, _item, _modal,
                              _purpose, _sanction, _topic, _when, _who)

# in the order they are tried: a candidate is asked about by the first pattern that reads it ("… dipidana dengan pidana
# penjara paling lama 1 tahun" is a sanction before it is a duration)
PATTERNS = ("definition", "enumeration", "item", "sanction", "in_force", "duration", "amount", "who", "obligation",
            "prohibition", "permission", "when", "purpose", "general", "chapter")
PER_LAW = 4          # most questions of one pattern from one law: many laws, not a few long ones


@dataclass(frozen=True)
class MinedQuestion:
    qid: str
    question: str
    pattern: str
    law: str                                # the law's citation name, "UU 13/2003"
    chunk_id: str
    kind: str                               # the gold candidate's kind
    segments: tuple[tuple[int, int], ...]   # the gold candidate's segments in its chunk
    answer: str                             # the gold candidate's text (its pieces joined)


@dataclass(frozen=True)
class Law:
    name: str                # "uu/2003/13.md"
    cite: str                # "UU 13/2003"
    title: str
    chunks: tuple[Chunk, ...]


# --- reading the laws ----------------------------------------------------------------------

_MEMBER = re.compile(r"(?:^|/)(uu|pp)/(\d{4})/(\w+)\.md$")   # Undang-Undang, Peraturan Pemerintah


def _members(tar: tarfile.TarFile) -> list[tarfile.TarInfo]:
    return sorted((m for m in tar.getmembers() if m.isfile() and _MEMBER.search(m.name)), key=lambda m: m.name)


def law_names(archive: Path) -> list[str]:
    """The member names of an archive's laws ("uu/2003/13.md", "pp/2021/5.md"), in the order read_laws reads them."""
    with tarfile.open(archive, "r:*") as tar:
        return [m.name for m in _members(tar)]


def read_laws(archive: Path, chunker: Chunker, limit: int | None = None,
              keep: Callable[[str], bool] | None = None) -> Iterator[Law]:
    """The laws of a `uu.tar.xz` (or the regulations of a `pp.tar.xz`: scripts/pp_archive.py), in member-name
    order, each read and chunked as ingest would."""
    with tarfile.open(archive, "r:*") as tar, tempfile.TemporaryDirectory() as tmp:
        members = _members(tar)
        n = 0
        for m in members:
            if keep is not None and not keep(m.name):
                continue
            kind, year, number = _MEMBER.search(m.name).groups()
            path = Path(tmp) / f"{kind}-{year}-{number}.md"
            path.write_bytes(tar.extractfile(m).read())
            try:
                src = read_source(path)
                chunks = chunker.chunks(src.document, src.text, source=src)
            except Exception:  # a file the ingest path cannot read is not training data
                continue
            finally:
                path.unlink()
            if chunks:
                yield Law(m.name, src.document.cite_as or f"{kind.upper()} {number}/{year}", src.document.title, tuple(chunks))
                n += 1
                if limit is not None and n >= limit:
                    return


def context_item(chunk: Chunk, rank_score: float = 0.0) -> ContextItem:
    """A chunk as the generator reads it (orchestrator.py builds the same at run time)."""
    return ContextItem(chunk.chunk_id, chunk.title, chunk.location, chunk.text, chunk.is_example, chunk.lang,
                       rank_score, chunk.heading, (), chunk.spans)


# --- helpers the patterns share -----------------------------------------------------------


# --- the patterns --------------------------------------------------------------------------


def _chapter_title(heading: str) -> str | None:
    """A BAB's title as a question names it: "BAB IV KEPESERTAAN DAN TATA CARA PENDAFTARAN" -> "kepesertaan dan tata cara
    pendaftaran" (not "KETENTUAN UMUM" or the closing chapters: no one asks about those; chapters.askable)."""
    raw = heading_title(heading)
    if raw is None:
        return None
    title = _clean(raw).lower()
    return title if askable(title) else None


def _chapters(law: Law, tr: Translator) -> list[MinedQuestion]:
    """"Bagaimana ketentuan mengenai <a chapter's title>?": any Pasal of that BAB answers (a question
    about a whole chapter is answered by its provisions, as the gold of such questions lists them)."""
    seen: dict[str, list[Chunk]] = {}
    for chunk in law.chunks:
        if re.match(r"^(?:Pasal|Article)\s+\w+", chunk.location) and chunk.heading:
            seen.setdefault(chunk.heading.split(" › ")[0], []).append(chunk)
    out = []
    for heading, chunks in seen.items():
        title = _chapter_title(heading)
        if not title or len({c.location.split(" ")[1] for c in chunks}) < 2:
            continue
        key = f"chapter:{law.name}#{heading}"
        if _roll(key, ENGLISH_SHARE) and (t_en := tr(title)):
            question = _pick(key, [f"What are the rules on {t_en}?", f"What does the law provide on {t_en}?"])
        else:
            question = _pick(key, [f"Bagaimana ketentuan mengenai {title}?", f"Apa saja yang diatur mengenai {title}?",
                                   f"Bagaimana pengaturan {title}?", f"Jelaskan ketentuan tentang {title}!",
                                   f"Apa ketentuan {title}?"])
            if len(title.split()) >= 3:  # a one- or two-word title would lose all it names to a synonym
                question = _in_own_words(key, question)
        out.append(MinedQuestion(hashlib.sha256(key.encode()).hexdigest()[:16], question, "chapter", law.cite,
                                 chunks[0].chunk_id, "chapter", (), heading.split(" › ")[0]))
    return out


# --- mining --------------------------------------------------------------------------------

def _pattern_readers(topic: str) -> dict[str, Callable]:
    """Each pattern's reader of a candidate: (candidate, chunk, key, translator) → (question, in English?) or None;
    a pattern without its own reads as `_general`. `topic`: the law's, which "in force" questions name."""
    return {"definition": _definition, "enumeration": _enumeration, "item": _item, "who": _who,
            "obligation": functools.partial(_modal, which="wajib"),
            "prohibition": functools.partial(_modal, which="dilarang"),
            "permission": functools.partial(_modal, which="dapat|berhak"),
            "duration": _duration, "amount": _amount, "sanction": _sanction, "when": _when, "purpose": _purpose,
            "in_force": functools.partial(_in_force, topic=topic)}


def mine_law(law: Law, profile: Profile, tr: Translator) -> list[MinedQuestion]:
    """Every pattern's questions of one law, at most PER_LAW per pattern (spread over the law)."""
    g = profile.settings.generator
    readers = _pattern_readers(_topic(law.title))
    found: dict[str, list[MinedQuestion]] = {p: [] for p in PATTERNS}
    for chunk in law.chunks:
        if chunk.is_example or chunk.location.startswith(("Penjelasan", "Explanation", "Lampiran", "pembukaan",
                                                           "Menimbang", "Mengingat", "Menetapkan")):
            continue
        cands = answer_candidates([context_item(chunk)], g.min_sentence_chars, g.max_quote_chars,
                                  max_unit_chars=g.max_unit_chars)
        # an item of a list is asked about with its lead-in, not again as a bare sentence
        in_items = {c.segments[-1][1] for c in cands if c.kind == "item"}
        for c in cands:
            if c.kind == "sentence" and c.end in in_items:
                continue
            place = f"{law.name}#{chunk.chunk_id}#{c.segments}"
            for pattern in PATTERNS:
                key = f"{pattern}:{place}"
                got = readers.get(pattern, _general)(c, chunk, key, tr)
                if got:
                    question, english = got
                    question = _drop_some(key, _SPACE.sub(" ", question).strip())
                    if not english:
                        question = _in_own_words(key, question)
                    qid = hashlib.sha256(key.encode()).hexdigest()[:16]
                    found[pattern].append(MinedQuestion(qid, question, pattern, law.cite, chunk.chunk_id, c.kind,
                                                        c.segments, c.quote))
                    break  # one question per candidate: the first pattern that reads it
    found["chapter"] = _chapters(law, tr)
    out = []
    for pattern, qs in found.items():
        if len(qs) > PER_LAW:  # spread over the law, in a seeded order
            qs = sorted(qs, key=lambda q: hashlib.sha256(f"order:{q.qid}".encode()).hexdigest())[:PER_LAW]
        out.extend(qs)
    return out
