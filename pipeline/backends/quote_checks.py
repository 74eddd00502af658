"""What the extractive generator and the verbatim judge read in a quote besides its exact words: a flipped negation,
a phrase the question excludes, an opposite word, a quote cut short, a form in an annex, items elided from an
enumeration. Each says where it fails."""
from __future__ import annotations

import re
from functools import lru_cache

from ..answer_reader import ELISION
from ..text import locate, normalise, split_sentences


NEGATORS = frozenset({"tidak", "bukan", "tanpa", "belum", "tak", "jangan", "tiada",
                      "not", "no", "never", "without", "cannot", "nor", "neither", "none"})
_WORD = re.compile(r"\w+", re.UNICODE)


def _words(text: str) -> list[str]:
    return [w.casefold() for w in _WORD.findall(normalise(text))]


@lru_cache(maxsize=64)
def _asked(question: str) -> tuple[str, ...]:
    """The question's words, worked out once per question: every candidate is checked against them."""
    return tuple(_words(question))


def polarity_flip(claim: str, premise: str) -> str | None:
    """The premise sentence that says the claim's words with the opposite negation, if any.

    "Penyewa tidak wajib memotong PPh" against "Penyewa wajib memotong PPh": the same words
    once negation words are set aside, an odd difference in how many negations they carry.
    """
    cw = _words(claim)
    core = [w for w in cw if w not in NEGATORS]
    if len(core) < 3:
        return None
    n_claim = len(cw) - len(core)
    for sent in split_sentences(premise):
        sw = _words(sent.text)
        positions = [i for i, w in enumerate(sw) if w not in NEGATORS]
        sc = [sw[i] for i in positions]
        for k in range(len(sc) - len(core) + 1):
            if sc[k:k + len(core)] != core:
                continue
            lo, hi = positions[k], positions[k + len(core) - 1]
            # negations inside the matched window, and one right before it ("tidak <claim…>")
            n_sent = sum(1 for w in sw[max(0, lo - 1):hi + 1] if w in NEGATORS)
            if (n_claim - n_sent) % 2:
                return sent.text
    return None


# what turns a phrase into its complement: "bukan penerima Upah", "non PNS", "selain penyelenggara negara"
EXCLUDERS = frozenset({"bukan", "non", "selain", "except"})
_FUNCTION = frozenset({"yang", "dan", "atau", "dari", "bagi", "untuk", "dalam", "pada", "oleh", "dengan", "ke", "di",
                       "the", "and", "for", "of", "to", "in", "on", "by", "with"})


def excluded_phrase(question: str, text: str) -> str | None:
    """A two-word phrase the question and the text take on opposite sides of its complement: the question asks of
    it and the text states it only as its complement ("penerima upah" asked, "Peserta bukan penerima Upah" stated),
    or the question asks of the complement and the text states only the phrase itself ("bukan penerima upah" asked,
    "Iuran JKM bagi Peserta penerima Upah" stated, returned as "bukan penerima upah"). Either way the text speaks of
    the others, not of what was asked. None when both take the same side, or the text states both sides."""
    qw, tw = _asked(question), _words(text)
    for a, b in zip(qw, qw[1:]):
        if a in _FUNCTION or b in _FUNCTION or a in EXCLUDERS or len(a) < 3 or len(b) < 3:
            continue
        at = [i for i in range(len(tw) - 1) if tw[i] == a and tw[i + 1] == b]
        if not at:
            continue
        said = [i for i in range(len(qw) - 1) if (qw[i], qw[i + 1]) == (a, b)]
        asked = [i > 0 and qw[i - 1] in EXCLUDERS for i in said]
        stated = [i > 0 and tw[i - 1] in EXCLUDERS for i in at]
        if not any(asked) and all(stated):
            return f"{a} {b}"
        if all(asked) and not any(stated):
            return f"{qw[said[0] - 1]} {a} {b}"
    return None


# words of opposite meaning, as written (each line: one side | the other side)
OPPOSITES = tuple(
    tuple(frozenset(side.split()) for side in line.split("|"))
    for line in """
    lahir kelahiran dilahirkan lahirnya | meninggal wafat tewas gugur kematian meninggalnya wafatnya
    mulai dimulai dimulainya memulai bermula awal | berakhir berakhirnya selesai usai akhir diakhiri
    berdiri didirikan | bubar dibubarkan
    pertama | terakhir
    panas | dingin
    mayoritas | minoritas
    tertinggi | terendah
    terbesar | terkecil
    terbanyak | tersedikit
    tertua | termuda
    terpanjang | terpendek
    terdekat | terjauh
    termahal | termurah
    naik kenaikan | turun penurunan
    masuk | keluar
    utara | selatan
    timur | barat
    modern | tradisional kuno
    nyata | maya
    menang kemenangan | kalah kekalahan
    pria laki | wanita perempuan
    sebelum | sesudah setelah
    kiri | kanan
    maksimum maksimal | minimum minimal
    murah | mahal
    kaya | miskin
    positif | negatif
    suami | istri
    raja | ratu
    kakak | adik
    ganas | jinak
    impor | ekspor
    pengangkatan diangkat mengangkat | pemberhentian diberhentikan memberhentikan
    born birth | died death dies
    start started starts began begins founded | end ended ends dissolved
    first | last
    highest | lowest
    largest | smallest
    oldest | youngest
    north | south
    east | west
    before | after
    majority | minority
    maximum | minimum
    import imports imported | export exports exported
    appointed appointment | dismissed dismissal
    """.strip().splitlines())


def opposite_word(question: str, text: str) -> str | None:
    """A word the question asks whose opposite the text says instead (OPPOSITES), as "asked/said": "meninggal/lahir"
    for "Kapan Bob Dylan meninggal?" of "Bob Dylan lahir … 24 Mei 1941", "minoritas/mayoritas", "panas/dingin". The
    text speaks of the other side, so it answers another question. None when the text says the word asked too, the
    question says the opposite too, or one of them is negated and the other not ("yang tidak berdarah panas" is
    what "berdarah dingin" says)."""
    qw, tw = frozenset(_asked(question)), frozenset(_words(text))
    if bool(qw & NEGATORS) != bool(tw & NEGATORS):
        return None
    for a, b in OPPOSITES:
        for asked, said in ((a, b), (b, a)):
            if asked & qw and said & tw and not asked & tw and not said & qw:
                return f"{min(asked & qw)}/{min(said & tw)}"
    return None


# a word no sentence ends on: a preposition, an article, a copula, or "tanggal" with its date missing (not "dan",
# "atau": an item of a list ends on them before the next, "…; dan", with or without its mark)
_DANGLING = re.compile(r"\b(?:pada|tanggal|di|ke|dari|dengan|yang|untuk|oleh|bahwa|sebagai|terhadap|atas|bagi|adalah|"
                       r"merupakan|sejak|sampai|hingga|tentang|dalam|the|of|to|on|in|at|by|for|with|a|an|is|are|"
                       r"from)$", re.IGNORECASE)


def cut_short(quote: str) -> bool:
    """The quote stops mid-phrase, on a word no sentence ends on and without a closing mark, as text the layout broke
    apart does ("Pasal II ini mulai berlaku pada tanggal", the date in another column): it states less than it
    seems to."""
    text = quote.rstrip()
    return bool(text) and text[-1].isalnum() and bool(_DANGLING.search(text))


# an instrument's own entry into force: "Keputusan Menteri ini mulai berlaku …", "This Decree takes effect …"
_OWN_FORCE_CLAUSE = re.compile(r"\b(?:keputusan|peraturan|surat|instruksi)\b[^.;]{0,60}?\bini\s+(?:mulai\s+)?berlaku\b"
                               r"|\bthis\s+\w+(?:\s+\w+)?\s+(?:shall\s+)?(?:takes?|comes?)\s+(?:effect|into\s+force)\b",
                               re.IGNORECASE)
_ANNEX = re.compile(r"\s*(?:lampiran|annex|appendix)\b", re.IGNORECASE)  # a location in an annex


def annexed_form(location: str, quote: str) -> bool:
    """An instrument's entry-into-force clause found in an annex ("Lampiran", "Annex"): the annex holds forms of other
    instruments (a Keputusan Menteri to be issued under the regulation, "Keputusan Menteri ini mulai berlaku pada
    tanggal ditetapkan"), and a document's own clause is in its closing provisions, never in its annex."""
    return bool(_ANNEX.match(location)) and bool(_OWN_FORCE_CLAUSE.search(quote))


_ITEM_LINE = re.compile(r"^\s*(?:[a-z]|\d{1,3})[.)]\s")  # a line that is an item of an enumeration: "b. …", "3. …"


def elided_verbatim(claim: str, premise: str) -> bool:
    """The claim is pieces joined with answers.ELISION ("lead-in [...] b. item"), each found
    verbatim in the premise in order, and what lies between two pieces is only whole items of
    an enumeration: each piece before a gap ends a line, each piece after one starts a line,
    and every line left out starts with an item's label. Leaving out the sibling items of a
    list never changes what the lead-in says of the item kept; leaving out anything else might."""
    parts = normalise(claim).split(ELISION.strip())
    parts = [p.strip() for p in parts]
    if len(parts) < 2 or not all(parts):
        return False
    pos = 0
    prev_end = None
    for part in parts:
        found = locate(premise[pos:], part)
        if found is None:
            return False
        start, end = pos + found[0], pos + found[1]
        if prev_end is not None:
            gap = premise[prev_end:start]
            if "\n" not in gap or gap[:gap.index("\n")].strip() or premise[premise.rfind("\n", 0, start) + 1:start].strip():
                return False  # a piece is cut out of a line, not a whole line left out
            if not all(_ITEM_LINE.match(line) for line in gap.split("\n") if line.strip()):
                return False
        pos = prev_end = end
    return True
