"""The question patterns mining reads a law's passages with: a definition, an enumeration and its items, a duration,
an amount, a sanction, who does what, when a rule applies, its purpose, when a law came into force. Each pattern
takes a passage's answer candidate and gives a question, or None."""
from __future__ import annotations

import re
from typing import Callable, Sequence

from ..definitions import entry_of
from ..types import Chunk
from .answers import AnswerCandidate
from .mining_words import (ENGLISH_SHARE, Translator, _LABEL, _SPACE, _STOP_HEAD, _cap, _clean, _lower_first, _pick,
                           _roll, _words, to_active)


_LIST_VERB = re.compile(r"^(?P<subject>.+?)\s*(?P<verb>terdiri\s+(?:atas|dari)|meliputi|mencakup|(?:paling\s+sedikit\s+)?"
                        r"memuat|berupa|yaitu|yakni|antara\s+lain|sebagai\s+berikut|tidak\s+berlaku\s+(?:bagi|untuk)|"
                        r"wajib|dilarang|(?:di\w+\s+)?oleh|diberikan\s+kepada|bertugas|berwenang|berhak|dapat\s+berupa|"
                        r"dikecualikan\s+(?:bagi|untuk|dari)|ditujukan\s+untuk|bertujuan|berfungsi|dapat)\s*:?\s*$",
                        re.IGNORECASE | re.DOTALL)
_DURATION = re.compile(r"\b(?P<cue>paling\s+lama|paling\s+lambat|paling\s+singkat|dalam\s+jangka\s+waktu|dalam\s+waktu|selama|"
                       r"jangka\s+waktu)\s+(?:\w+\s+){0,2}?\d+\s*(?:\([^)]{1,40}\)\s*)?(?:hari\s+kerja|hari|minggu|bulan|"
                       r"tahun|jam)\b[^.;]*?(?=[,.;]|$)", re.IGNORECASE)
_AMOUNT = re.compile(r"\b(?P<cue>sebesar|sebanyak|paling\s+(?:banyak|sedikit|tinggi|rendah)|setinggi-tingginya|"
                     r"serendah-rendahnya)\s+(?:Rp\.?\s?[\d.,]+|[\d.,]+\s*%|[\d.,]+\s*\(|[\d.,]+\s+persen)[^.;]*?(?=[,.;]|$)",
                     re.IGNORECASE)
_SANCTION = re.compile(r"^(?P<subject>.{10,220}?)\s*,?\s*(?:dipidana|dikenai\s+sanksi|dikenakan\s+sanksi|dijatuhi|"
                       r"diancam\s+dengan\s+pidana|dikenai\s+pidana|dikenakan\s+denda|dikenai\s+denda)\b", re.IGNORECASE)
_PASSIVE_BY = re.compile(r"^(?P<object>.{8,160}?)\s+(?P<verb>di[a-z]{3,})\s+oleh\s+(?P<agent>[^,.;]{3,120})", re.IGNORECASE)
_ACTOR = re.compile(r"^(?P<agent>Menteri|Presiden|Pemerintah(?:\s+Pusat|\s+Daerah)?|Gubernur|Bupati(?:/Wali\s*Kota)?|"
                    r"Wali\s*Kota|Kepala\s+\w+|Direktur\s+Jenderal|Badan|Komisi|Lembaga|Dewan|Mahkamah\s+\w+|Menteri\s+\w+)"
                    r"\s+(?P<verb>me[a-z]{4,})\s+(?P<object>[^.;]{8,160})")
_MODAL = re.compile(r"^(?P<subject>[A-Z][^,;:]{2,120}?)\s+(?P<modal>wajib|dilarang|dapat|berhak)\s+(?P<rest>[^:]{8,220})$",
                    re.DOTALL)
_WHEN = re.compile(r"^(?P<subject>[A-Z][^,;:]{8,160}?)\s+(?P<cue>pada\s+saat|sejak|setelah|sebelum)\s+(?P<rest>[^;:]{5,200})$",
                   re.DOTALL)
_PURPOSE = re.compile(r"^(?P<subject>[A-Z][^,;:]{3,160}?)\s+(?:bertujuan|dimaksudkan|ditujukan)\s+(?:untuk\s+)?(?P<rest>[^:]{5,})$",
                      re.DOTALL)


# where a provision's subject ends: its first verb, modal or copula
_PREDICATE = re.compile(r"^(?:di[a-z]{3,}|me[a-z]{3,}|ber[a-z]{3,}|ter[a-z]{3,}|wajib|dapat|harus|adalah|merupakan|tidak|hanya|"
                        r"paling|sebagaimana|yang|dalam|untuk|sesuai|berdasarkan)$", re.IGNORECASE)
_IN_FORCE = re.compile(r"\bmulai\s+berlaku\s+(?:pada|sejak)\b", re.IGNORECASE)
_TITLE_TOPIC = re.compile(r"\bTENTANG\s+(?P<topic>.+)$", re.IGNORECASE | re.DOTALL)


def _either(key: str, tr: Translator, subject: str, english: Sequence[str],
            indonesian: Sequence[str]) -> tuple[str, bool]:
    """One of the templates ("{}": the subject) picked by `key`: in English for one place in ENGLISH_SHARE where the
    translator has the subject, else in Indonesian; and whether it is English."""
    if _roll(key, ENGLISH_SHARE) and (en := tr(subject)):
        return _pick(key, english).format(en), True
    return _pick(key, indonesian).format(subject), False


def _definition(c: AnswerCandidate, chunk: Chunk, key: str, tr: Translator) -> tuple[str, bool] | None:
    if not re.match(r"^(?:Pasal|Article)\s+1\b(?!\d)", chunk.location):
        return None
    if c.kind == "item" and not re.search(r"dimaksud\s+dengan|definitions?|means", c.lead, re.IGNORECASE):
        return None
    if c.kind not in ("item", "sentence"):
        return None
    entry = entry_of(_LABEL.sub("", c.body if c.kind == "item" else c.quote).strip())
    if not entry:
        return None
    long, short = _clean(entry.term), (_clean(entry.short) if entry.short else None)
    if not long or len(long.split()) > 10:
        return None
    asked = short if short and _roll(f"abbr:{key}", 2) else _lower_first(long)
    if _roll(key, ENGLISH_SHARE):
        en = short if short and (asked == short or tr(long) is None) else tr(long)
        if en:
            return _pick(key, ["What is meant by {}?", "What does {} mean?", "What is the definition of {}?",
                               "What is {}?", "Define {}."]).format(en), True
    return _pick(key, ["Apa yang dimaksud dengan {}?", "Apa yang dimaksud {}?", "Apa pengertian {}?", "Apa itu {}?",
                       "Apa definisi {}?", "{} adalah apa?", "Apa arti {}?", "Apa yang disebut dengan {}?",
                       "Jelaskan pengertian {}!"]).format(asked), False


_SUBJECT_TAIL = re.compile(r"(?:\s*,)?\s+(?:adalah|yang|dengan\s+ketentuan|ketentuan|sebagai\s+berikut|dengan|untuk|"
                           r"yaitu|antara\s+lain)$", re.IGNORECASE)


def _lead_parts(lead: str) -> tuple[str, str] | None:
    """A list's lead-in as (subject, verb): "Pengesahan RPTKA terdiri atas:" → ("Pengesahan RPTKA", "terdiri atas")."""
    m = _LIST_VERB.match(_clean(_LABEL.sub("", lead)) + ":")
    if not m:
        return None
    subject = _clean(m.group("subject"))
    while (t := _SUBJECT_TAIL.sub("", subject)) != subject:
        subject = _clean(t)
    if not 1 <= len(subject.split()) <= 14 or sum(ch.isdigit() for ch in subject) > 4:
        return None
    return subject, _SPACE.sub(" ", m.group("verb").lower())


def _enumeration(c: AnswerCandidate, chunk: Chunk, key: str, tr: Translator) -> tuple[str, bool] | None:
    if c.kind != "enumeration" or not 2 <= c.items <= 15 or not c.lead.rstrip().endswith(":"):
        return None
    parts = _lead_parts(c.lead)
    if not parts:
        return None
    s, v = parts
    s_low = _lower_first(s)
    if _roll(key, ENGLISH_SHARE) and (s_en := tr(s)):
        en = {"wajib": "What are the obligations of {}?", "dilarang": "What is {} prohibited from doing?",
              "oleh": "Who carries out {}?"}.get(v.split()[-1], None)
        return (en or _pick(key, ["What does {} include?", "What are the {}?", "What does {} consist of?",
                                  "List the {}."])).format(s_en), True
    if v == "wajib":
        return _pick(key, ["Apa saja kewajiban {}?", "Apa yang wajib dilakukan oleh {}?", "{} wajib melakukan apa saja?"]
                     ).format(s_low), False
    if v == "dilarang":
        return _pick(key, ["Apa saja larangan bagi {}?", "Apa yang dilarang bagi {}?", "{} dilarang melakukan apa saja?"]
                     ).format(s_low), False
    if v.endswith("oleh"):
        verb = v.split()[0] if len(v.split()) > 1 else ""
        return _pick(key, [f"Oleh siapa saja {s_low} {verb}?".replace("  ", " "), f"Siapa saja yang {to_active(verb) or verb} "
                           f"{s_low}?".replace("  ", " "), f"{_cap(s_low)} {v} siapa saja?"]), False
    if v.startswith("terdiri"):
        # "Jenis Hukuman Disiplin ringan … terdiri atas: a. teguran lisan, …" says what the term covers: people ask its
        # meaning as well as its members
        return _pick(key, [f"Apa yang dimaksud dengan {s_low}?", f"{_cap(s_low)} {v} apa saja?", f"Apa saja {s_low}?",
                           f"Sebutkan {s_low}!"]), False
    if v.startswith(("tidak berlaku", "dikecualikan")):
        return _pick(key, [f"Bagi siapa saja {s_low} {v.split()[0]} {v.split()[1]}?", f"Siapa saja yang dikecualikan "
                           f"dari {s_low}?", f"{_cap(s_low)} tidak berlaku bagi siapa saja?"]), False
    return _pick(key, [f"{_cap(s_low)} {v} apa saja?", f"Apa saja {s_low}?", f"Sebutkan {s_low}!",
                       f"Apa saja yang termasuk {s_low}?", f"Ada berapa {s_low}?", f"Apa saja yang {v} {s_low}?"]), False


def _item(c: AnswerCandidate, chunk: Chunk, key: str, tr: Translator) -> tuple[str, bool] | None:
    if c.kind != "item" or not 2 <= c.items <= 15 or not c.lead.rstrip().endswith(":"):
        return None
    if re.search(r"dimaksud\s+dengan", c.lead, re.IGNORECASE):
        return None  # a definitions list's entries are the definition pattern's
    parts = _lead_parts(c.lead)
    if not parts:
        return None
    s, v = parts
    item = _clean(_LABEL.sub("", c.body))
    words = [w for w in item.split() if w.lower() not in _STOP_HEAD]
    if len(words) < 2 or len(item) > 300:
        return None
    head = " ".join(item.split()[:_pick(f"h:{key}", [1, 2, 2, 3])])
    short = _words(item, _pick(f"s:{key}", [4, 5, 6, 8]))
    s_low = _lower_first(s)
    if _roll(key, ENGLISH_SHARE) and (s_en := tr(s)) and (i_en := tr(short)):
        return _pick(key, [f"Does {s_en} include {i_en}?", f"Is {i_en} part of {s_en}?",
                           f"Which {tr(head) or head} is covered by {s_en}?"]), True
    if v == "wajib":
        return _pick(key, [f"Apakah {s_low} wajib {_lower_first(short)}?", f"Bagaimana kewajiban {s_low} terkait "
                           f"{_lower_first(short)}?", f"Siapa yang wajib {_lower_first(short)}?"]), False
    if v == "dilarang":
        return _pick(key, [f"Apakah {s_low} boleh {_lower_first(short)}?", f"Apakah {s_low} dilarang "
                           f"{_lower_first(short)}?"]), False
    if v.startswith(("tidak berlaku", "dikecualikan")):
        return _pick(key, [f"Apakah {s_low} berlaku bagi {_lower_first(short)}?", f"Apakah {_lower_first(short)} "
                           f"dikecualikan dari {s_low}?"]), False
    if v.endswith("oleh"):
        verb = v.split()[0] if len(v.split()) > 1 else "dilaksanakan"
        active = to_active(verb) or verb
        return _pick(key, [f"{_cap(_lower_first(head))} mana yang {active} {s_low}?", f"Siapa yang {active} {s_low} "
                           f"selain {_lower_first(_words(item, 2))}?", f"Apakah {_lower_first(short)} {active} "
                           f"{s_low}?"]), False
    return _pick(key, [f"Apakah {_lower_first(short)} termasuk {s_low}?", f"{_cap(s_low)} {v} {_lower_first(head)} "
                       f"apa?", f"Apakah {s_low} {v} {_lower_first(short)}?", f"{_cap(_lower_first(head))} apa yang "
                       f"{v} {s_low}?", f"Apa saja {_lower_first(head)} dalam {s_low}?"]), False


_EXPLAINING = re.compile(r"\bcukup\s+jelas\b|\byang\s+dimaksud\s+dengan\s*[\"”“]|^\s*(?:Ayat|Huruf|Angka)\s+\(?\w{1,3}\)?\s"
                         r"|\bAgar\s+setiap\s+orang\b", re.IGNORECASE)


# a subject that opens with a condition or a connective names no subject a question can ask about
_NOT_A_SUBJECT = re.compile(r"^(?:dalam\s+hal|apabila|jika|bila|selain|agar|dengan|untuk|pada\s+saat|sebelum|setelah|sesuai|"
                            r"berdasarkan|ketentuan|sebagaimana|demikian|oleh\s+karena|karena|meskipun|walaupun|namun|"
                            r"selama|sejak|terhadap|atas|bagi|di\s+samping)\b", re.IGNORECASE)


def _sentence_text(c: AnswerCandidate) -> str | None:
    """The text of a sentence or ayat candidate a pattern may read (not an elucidation's wording, not a
    sentence that opens with a condition)."""
    if c.kind not in ("sentence", "ayat") or len(c.quote) > 400 or _EXPLAINING.search(c.quote):
        return None
    text = _LABEL.sub("", c.quote).strip()
    return None if _NOT_A_SUBJECT.match(text) else text


def _who(c: AnswerCandidate, chunk: Chunk, key: str, tr: Translator) -> tuple[str, bool] | None:
    text = _sentence_text(c)
    if not text:
        return None
    m = _PASSIVE_BY.match(text)
    if m and (active := to_active(m.group("verb"))):
        obj = _lower_first(_clean(m.group("object")))
        if _roll(key, ENGLISH_SHARE) and (o_en := tr(obj)) and (v_en := tr(m.group("verb"))):
            return _pick(key, [f"Who {v_en} {o_en}?", f"By whom is {o_en} {v_en}?"]), True
        return _pick(key, [f"Siapa yang {active} {obj}?", f"Oleh siapa {obj} {m.group('verb').lower()}?",
                           f"{_cap(obj)} {m.group('verb').lower()} oleh siapa?", f"Pihak mana yang {active} {obj}?"]), False
    m = _ACTOR.match(text)
    if m:
        obj = _words(_clean(m.group("object")), 10)
        verb = m.group("verb").lower()
        return _pick(key, [f"Siapa yang {verb} {obj}?", f"Siapa yang berwenang {verb} {obj}?"]), False
    return None


def _modal(c: AnswerCandidate, chunk: Chunk, key: str, tr: Translator, which: str) -> tuple[str, bool] | None:
    text = _sentence_text(c)
    if not text:
        return None
    m = _MODAL.match(text)
    if not m or m.group("modal").lower() not in which.split("|"):
        return None
    subj = _lower_first(_clean(m.group("subject")))
    if len(subj.split()) > 12 or subj.lower().startswith(("dalam hal", "apabila", "jika")):
        return None
    rest = _words(_clean(m.group("rest")), _pick(f"r:{key}", [5, 7, 9, 12]))
    if _roll(key, ENGLISH_SHARE) and (s_en := tr(subj)) and (r_en := tr(rest)):
        return (_pick(key, [f"Must {s_en} {r_en}?", f"Who must {r_en}?"]) if which == "wajib" else
                _pick(key, [f"May {s_en} {r_en}?", f"Is {s_en} prohibited from {r_en}?"])), True
    if which == "wajib":
        return _pick(key, [f"Apakah {subj} wajib {rest}?", f"Siapa yang wajib {rest}?", f"Apa kewajiban {subj} terkait "
                           f"{_words(rest, 4)}?", f"Apakah {subj} harus {rest}?"]), False
    if which != "dilarang":  # permission: dapat, berhak
        return _pick(key, [f"Apakah {subj} dapat {rest}?", f"Bolehkah {subj} {rest}?", f"Dapatkah {subj} {rest}?",
                           f"Apakah {subj} berhak {rest}?", f"Siapa yang dapat {rest}?"]), False
    return _pick(key, [f"Apakah {subj} boleh {rest}?", f"Siapa yang dilarang {rest}?", f"Apa yang dilarang bagi {subj}?",
                       f"Apakah {subj} dapat {rest}?"]), False


def _when(c: AnswerCandidate, chunk: Chunk, key: str, tr: Translator) -> tuple[str, bool] | None:
    text = _sentence_text(c)
    if not text or _DURATION.search(text) or not (m := _WHEN.match(text)):
        return None
    subj = _lower_first(_words(_clean(m.group("subject")), 14))
    if len(subj.split()) < 3 or not any(re.match(r"(?:di|me|ber|ter)[a-z]{3,}$", w) for w in subj.split()):
        return None  # "Kapan" asks when something is done: the subject must carry its verb
    if _roll(key, ENGLISH_SHARE) and (s_en := tr(subj)):
        return f"When {s_en}?", True
    return _pick(key, [f"Kapan {subj}?", f"Sejak kapan {subj}?" if "sejak" in m.group("cue").lower() else f"Kapan "
                       f"{subj}?", f"{_cap(subj)} kapan?"]), False


def _purpose(c: AnswerCandidate, chunk: Chunk, key: str, tr: Translator) -> tuple[str, bool] | None:
    text = _sentence_text(c)
    if not text or not (m := _PURPOSE.match(text)):
        return None
    subj = _lower_first(_words(_clean(m.group("subject")), 12))
    if len(subj.split()) < 2:
        return None
    return _either(key, tr, subj, ["What is the purpose of {}?", "What is {} for?"],
                   ["Apa tujuan {}?", "Untuk apa {}?", "Apa tujuan dari {}?"])


def nominalise(verb: str, stem: Callable[[str], str]) -> str | None:
    """The noun of an action, as questions name it: "memberikan" -> "pemberian", "dilaksanakan" ->
    "pelaksanaan", "mengawasi" -> "pengawasan" (peN- ... -an over the verb's meN- form; a final -i
    goes only when the root does not end in it: "memberi" -> "pemberian")."""
    v = verb.lower()
    if v.startswith("di"):
        v = to_active(v) or ""
    m = re.match(r"^me(ny|ng|m|n)?(?!per)([a-z]{3,})$", v)
    if not m:
        return None
    nasal, rest = m.group(1) or "", m.group(2)
    if rest.endswith("kan"):
        rest = rest[:-3]
    elif rest.endswith("i") and not stem(v).endswith("i"):
        rest = rest[:-1]
    return f"pe{nasal}{rest}an" if len(rest) >= 3 else None


_VERB = re.compile(r"^(?:me|di)[a-z]{4,}$")
_NOT_ACTIONS = frozenset("merupakan menjadi meliputi memuat mencakup mempunyai memiliki".split())
_OBJECT_STOP = re.compile(r"^(?:kepada|dengan|sesuai|sebagaimana|dalam|pada|untuk|bagi|oleh|yang|dan|atau|serta|paling|"
                          r"secara|sejak|setelah|sebelum|apabila|jika)$", re.IGNORECASE)


def _action_of(text: str, stem: Callable[[str], str]) -> str | None:
    """What a provision makes happen, named as people ask about it: the noun of its first verb and
    the words after it ("… dapat memberikan istirahat panjang." -> "pemberian istirahat panjang")."""
    words = _clean(_LABEL.sub("", text)).split()
    for i, w in enumerate(words[:12]):
        if w.lower() in _NOT_ACTIONS:
            return None  # "X merupakan Y", "X meliputi:": it states what X is, nothing happens
        if _VERB.match(w.lower()) and (noun := nominalise(w, stem)):
            obj = []
            for x in words[i + 1:i + 6]:
                if _OBJECT_STOP.match(x) or any(ch.isdigit() for ch in x):
                    break
                obj.append(x.strip(",.;:"))
            return " ".join([noun, *obj]) if obj else None
    return None


def _topic_of(text: str) -> str | None:
    """A provision's subject, as a question names it: its words up to the first verb, modal or copula."""
    if _NOT_A_SUBJECT.match(_LABEL.sub("", text).strip()) or _EXPLAINING.search(text):
        return None
    words = []
    for w in _clean(_LABEL.sub("", text)).split():
        if _PREDICATE.match(w) and words:
            break
        words.append(w)
        if len(words) > 7:
            return None
    topic = " ".join(words)
    return topic if 2 <= len(words) <= 7 and not any(ch.isdigit() for ch in topic) else None


def _general(c: AnswerCandidate, chunk: Chunk, key: str, tr: Translator) -> tuple[str, bool] | None:
    """"Bagaimana ketentuan …?": about what the Pasal or ayat makes happen (half the questions), else its subject."""
    if c.kind not in ("pasal", "ayat") or len(c.quote) > 900:
        return None
    action = _action_of(c.quote, tr.stem) if _roll(f"action:{key}", 2) else None
    topic = action or _topic_of(c.quote)
    if not topic:
        return None
    t = _lower_first(topic)
    return _either(key, tr, t, ["What are the rules on {}?", "What does the regulation say about {}?",
                                "How is {} regulated?"],
                   ["Bagaimana ketentuan mengenai {}?", "Apa ketentuan tentang {}?", "Bagaimana pengaturan {}?",
                    "Apa yang diatur mengenai {}?", "Jelaskan ketentuan {}!", "Bagaimana mekanisme {}?",
                    "Bagaimana ketentuan {}?", "Bagaimana tata cara {}?"])


def _without(text: str, m: re.Match) -> str:
    return _clean(text[:m.start()] + " " + text[m.end():])


def _duration(c: AnswerCandidate, chunk: Chunk, key: str, tr: Translator) -> tuple[str, bool] | None:
    text = _sentence_text(c)
    if not text or not (m := _DURATION.search(text)):
        return None
    rest = _lower_first(_words(_without(text, m), 18))
    if len(rest.split()) < 4:
        return None
    if _roll(key, ENGLISH_SHARE) and (r_en := tr(rest)):
        return _pick(key, [f"How long {r_en}?", f"Within what period {r_en}?", f"By when {r_en}?"]), True
    if "lambat" in m.group("cue").lower():
        return _pick(key, [f"Kapan paling lambat {rest}?", f"Kapan batas waktu {rest}?", f"Berapa lama {rest}?"]), False
    return _pick(key, [f"Berapa lama {rest}?", f"Dalam jangka waktu berapa lama {rest}?", f"Berapa lama jangka waktu "
                       f"{rest}?", f"{_cap(rest)} dalam waktu berapa lama?"]), False


def _amount(c: AnswerCandidate, chunk: Chunk, key: str, tr: Translator) -> tuple[str, bool] | None:
    text = _sentence_text(c)
    if not text or not (m := _AMOUNT.search(text)):
        return None
    rest = _lower_first(_words(_without(text, m), 18))
    if len(rest.split()) < 3:
        return None
    pct = "%" in m.group(0) or "persen" in m.group(0).lower()
    if _roll(key, ENGLISH_SHARE) and (r_en := tr(rest)):
        return (f"What percentage is {r_en}?" if pct else _pick(key, [f"How much is {r_en}?",
                                                                     f"What is the amount of {r_en}?"])), True
    if pct:
        return _pick(key, [f"Berapa persen {rest}?", f"Berapa besar persentase {rest}?"]), False
    return _pick(key, [f"Berapa besar {rest}?", f"Berapa jumlah {rest}?", f"Berapa {rest}?"]), False


def _sanction(c: AnswerCandidate, chunk: Chunk, key: str, tr: Translator) -> tuple[str, bool] | None:
    text = _sentence_text(c)
    if not text or not (m := _SANCTION.match(text)):
        return None
    subj = _lower_first(_words(_clean(m.group("subject")), 16))
    if len(subj.split()) < 3:
        return None
    return _either(key, tr, subj, ["What is the penalty for {}?", "What sanction applies to {}?"],
                   ["Apa sanksi bagi {}?", "Apa ancaman pidana bagi {}?", "Sanksi apa yang dikenakan kepada {}?",
                    "Apa hukuman bagi {}?"])


def _in_force(c: AnswerCandidate, chunk: Chunk, key: str, tr: Translator, topic: str) -> tuple[str, bool] | None:
    text = _sentence_text(c)
    if not text or not _IN_FORCE.search(text) or not topic:
        return None
    return _either(key, tr, topic, ["When does the law on {} take effect?", "When did the law on {} come into force?"],
                   ["Kapan undang-undang tentang {} mulai berlaku?", "Sejak kapan undang-undang tentang {} berlaku?",
                    "Kapan UU {} mulai berlaku?"])


def _topic(title: str) -> str:
    m = _TITLE_TOPIC.search(title)
    topic = _clean(m.group("topic")) if m else ""
    return topic.lower() if 1 <= len(topic.split()) <= 8 else ""
