"""The words mined questions are made of: clean phrases cut from a law's text, a question put in other words than
the law's (synonyms, frames, active voice), and the translation of one into English (`Translator`)."""
from __future__ import annotations

import hashlib
import re
from typing import Sequence

from ..config import Glossary

ENGLISH_SHARE = 3    # one question in three is asked in English, where its words translate


def _pick(key: str, options: Sequence):
    """A choice seeded by `key`: the same place always gets the same question."""
    return options[int(hashlib.sha256(key.encode()).hexdigest(), 16) % len(options)]


def _roll(key: str, n: int) -> bool:
    return int(hashlib.sha256(f"roll:{key}".encode()).hexdigest(), 16) % n == 0


_SPACE = re.compile(r"\s+")
_REFS = re.compile(r",?\s*(?:sebagaimana|yang)\s+dimaksud\s+(?:dalam|pada)\s+(?:Pasal\s+\d+\w*\s*)?(?:ayat\s*\(\d+\w?\)\s*)?"
                   r"(?:huruf\s+\w\b\s*)?(?:angka\s+\d+\s*)?(?:(?:dan|atau|sampai dengan)\s+(?:Pasal|ayat|huruf)\s*\S+\s*)*",
                   re.IGNORECASE)
_LABEL = re.compile(r"^\s*(?:\(\w{1,3}\)|\w{1,3}[.)])\s*")
_TRAIL = re.compile(r"[\s,;:.]+$")
_CONJ_TAIL = re.compile(r"[;,]?\s*(?:dan|atau|dan/atau)\s*$", re.IGNORECASE)
_STOP_HEAD = frozenset("yang dan atau di ke dari untuk dengan dalam pada oleh bagi atas sebagai serta".split())


def _clean(text: str) -> str:
    """A provision's words as a question reuses them: one line, no references, no end punctuation."""
    text = _REFS.sub(" ", text)
    text = _CONJ_TAIL.sub("", _TRAIL.sub("", _SPACE.sub(" ", text)))
    return text.strip()


def _words(text: str, n: int) -> str:
    return " ".join(text.split()[:n])


def _lower_first(text: str) -> str:
    """Lower-case a first word that is not an abbreviation or a name-like run of capitals."""
    if not text:
        return text
    first = text.split()[0]
    if first.isupper() and len(first) > 1:
        return text
    return text[0].lower() + text[1:]


def _cap(text: str) -> str:
    return text[:1].upper() + text[1:]


def _drop_some(key: str, text: str) -> str:
    """People leave words out: drop one function word in three questions (never the first)."""
    if not _roll(f"drop:{key}", 3):
        return text
    words = text.split()
    idx = [i for i, w in enumerate(words) if i > 0 and w.lower() in ("yang", "dalam", "untuk", "dengan", "secara")]
    if not idx:
        return text
    i = _pick(f"dropat:{key}", idx)
    return " ".join(words[:i] + words[i + 1:])


# People ask in their own words, not the provision's: a word of the question is often one the text
# does not use ("berhak mengawasi" for "pengawasan … dilaksanakan oleh"), and questions carry words
# that frame rather than ask ("menurut peraturan", "ketentuan"). A mined question copies the text, so
# some questions trade one of its words for a near-synonym and some gain a framing phrase: the reader
# then meets, in training, answers that do not repeat every word of their question.
_SYNONYMS = {
    "wajib": ("harus", "perlu", "diwajibkan"), "harus": ("wajib", "perlu"), "dapat": ("boleh", "bisa", "berhak"),
    "melaksanakan": ("melakukan", "menyelenggarakan", "menjalankan"), "dilaksanakan": ("dilakukan", "dijalankan"),
    "melakukan": ("melaksanakan", "mengerjakan"), "dilakukan": ("dilaksanakan", "dijalankan"),
    "memberikan": ("memberi", "menyediakan"), "diberikan": ("diberi", "disediakan", "diterima"),
    "menyampaikan": ("mengirimkan", "mengajukan"), "disampaikan": ("dikirimkan", "diajukan"),
    "menetapkan": ("menentukan", "memutuskan"), "ditetapkan": ("ditentukan", "diputuskan"),
    "mengajukan": ("menyampaikan", "memasukkan"), "diajukan": ("disampaikan", "dimasukkan"),
    "permohonan": ("pengajuan", "usulan"), "memuat": ("berisi", "mencantumkan"), "meliputi": ("mencakup", "termasuk"),
    "pekerja": ("karyawan", "buruh"), "pengusaha": ("perusahaan", "pemberi kerja"), "setiap": ("tiap", "masing-masing"),
    "kepada": ("untuk", "bagi"), "mengenai": ("tentang", "terkait"), "tentang": ("mengenai", "terkait"),
    "mempunyai": ("memiliki",), "memiliki": ("mempunyai",), "menerima": ("mendapat", "memperoleh"),
    "memperoleh": ("mendapatkan", "menerima"), "mendapat": ("memperoleh", "menerima"),
    "mengawasi": ("memantau",), "pengawasan": ("kontrol", "pemantauan"), "pembinaan": ("bimbingan",),
    "pelaksanaan": ("penerapan", "implementasi"), "penyelenggaraan": ("pelaksanaan", "pengelolaan"),
    "ketentuan": ("aturan", "peraturan"), "sanksi": ("hukuman",), "dipidana": ("dihukum",),
    "pemerintah": ("negara",), "menteri": ("kementerian",), "tertulis": ("resmi",),
    "paling": ("maksimal",), "lama": ("lamanya",), "besarnya": ("jumlah", "nilai"),
}
_FRAMES = ("Menurut peraturan, ", "Berdasarkan ketentuan yang berlaku, ", "Dalam peraturan ini, ", "Secara hukum, ",
           "Menurut undang-undang, ", "Terkait hal ini, ")
_FRAME_TAILS = (" menurut peraturan", " berdasarkan ketentuan", " dalam peraturan ini", " menurut aturan yang berlaku",
                " secara hukum")


def _in_own_words(key: str, question: str) -> str:
    """One question in two trades a word for a near-synonym; one in four gains a framing phrase."""
    words = question.split()
    if _roll(f"syn:{key}", 2):
        spots = [i for i, w in enumerate(words) if w.lower().strip("?,.!") in _SYNONYMS]
        if spots:
            i = _pick(f"synat:{key}", spots)
            w = words[i]
            core = w.lower().strip("?,.!")
            new = _pick(f"synas:{key}", _SYNONYMS[core])
            words[i] = w.lower().replace(core, new) if i else _cap(w.lower().replace(core, new))
    question = " ".join(words)
    if _roll(f"frame:{key}", 4) and question.endswith(("?", "!")):
        if _roll(f"framestart:{key}", 2):
            question = _pick(f"f:{key}", _FRAMES) + _lower_first(question)
        else:
            question = question[:-1] + _pick(f"t:{key}", _FRAME_TAILS) + question[-1]
    return question


def to_active(verb: str) -> str | None:
    """"dilaksanakan" → "melaksanakan": the active form of a di- passive, by the meN- prefix's sound rules."""
    v = verb.lower()
    if not v.startswith("di") or len(v) < 5:
        return None
    root = v[2:]
    c = root[0]
    if c in "lmnrwy":
        return "me" + root
    if c in "bfv":
        return "mem" + root
    if c == "p":  # "pilih" -> "memilih", but "pertimbangkan", "pekerjakan" keep their p: per-/pe- are prefixes
        return "mem" + (root if root.startswith(("per", "pekerja")) else root[1:])
    if c in "dcjz":
        return "men" + root
    if c == "t":
        return "men" + root[1:]
    if c == "s":
        return "meny" + root[1:]
    if c == "k":
        return "meng" + root[1:]
    return "meng" + root  # g, h, vowels


class Translator:
    """Indonesian phrases into English through the glossary, or None when a content word has no entry."""

    _KEEP = frozenset("dan atau".split())

    def __init__(self, glossary: Glossary, analyzer):
        """`analyzer`: the Indonesian analyser (its stop words are left out; its stemmer names verbs' roots)."""
        stopwords = analyzer.stopwords
        self.stem = analyzer.stem
        self.words: dict[str, str] = {}
        self.phrases: list[tuple[tuple[str, ...], str]] = []
        for en, ids in glossary.en_to_id.items():
            for i in ids:
                toks = tuple(i.lower().split())
                if len(toks) == 1:
                    self.words.setdefault(toks[0], en)
                else:
                    self.phrases.append((toks, en))
        self.phrases.sort(key=lambda p: -len(p[0]))
        self.stopwords = stopwords

    MAX_UNKNOWN = 0.3  # content words without an entry that may be left out (an English asker would not use them)

    def __call__(self, text: str) -> str | None:
        words = [w for w in re.findall(r"[\w/-]+", text.lower())]
        out: list[str] = []
        unknown = known = 0
        i = 0
        while i < len(words):
            for toks, en in self.phrases:
                if tuple(words[i:i + len(toks)]) == toks:
                    out.append(en)
                    known += 1
                    i += len(toks)
                    break
            else:
                w = words[i]
                i += 1
                if w in self.words:
                    out.append(self.words[w])
                    known += 1
                elif w in self._KEEP:
                    out.append({"dan": "and", "atau": "or"}[w])
                elif w.isupper() or any(ch.isdigit() for ch in w):
                    out.append(w)
                elif w in self.stopwords:
                    continue
                elif re.fullmatch(r"[a-z]{2,6}", w) and w.upper() in text:
                    out.append(w.upper())  # an abbreviation written in capitals in the source
                    known += 1
                else:
                    unknown += 1
        if not known or unknown > self.MAX_UNKNOWN * (known + unknown):
            return None
        return " ".join(out)
