"""Regulation numbering: which line is a Pasal, BAB, Bagian or Paragraf heading, and where the ayat and list numbers
that extraction set apart (a separate column, far from their text) belong; a number is re-attached only where the
sequence leaves one place for it."""
from __future__ import annotations

import re

from .lines import _Line, _Marker, _text_indices
from .patterns import (_AGAR, _AMEND_START, _AMEND_VERB, _BAB, _BAGIAN, _CLOSING, _CONTINUES, _INLINE_AYAT,
                       _INLINE_LIST, _ITEM_END, _LABEL, _LABEL_INLINE, _LAMPIRAN, _LAST_WORD, _LIST_LAST, _MARKED_ZONES,
                       _MARKER_LINE, _MEMUTUSKAN, _PARAGRAF, _PASAL, _PENJELASAN, _PENJELASAN_SUB, _SECTION_ENDS,
                       _SENTENCE_END, _TAKES_NUMBER, _TRAILING_CLOSERS)


def _last_word(text: str) -> str:
    m = _LAST_WORD.search(text)
    return m.group(1) if m else ""


def _continues(text: str) -> bool:
    """Whether a line ending like this runs on into a reference ("dimaksud dalam" / "Pasal 16")."""
    return text.endswith(",") or _last_word(text).lower() in _CONTINUES


def _takes_number(text: str) -> bool:
    return _last_word(text).lower() in _TAKES_NUMBER


_STRUCTURAL = (("pasal", _PASAL), ("bab", _BAB), ("bagian", _BAGIAN), ("paragraf", _PARAGRAF))


def _structural_kind(text: str) -> str | None:
    return next((kind for kind, pattern in _STRUCTURAL if pattern.fullmatch(text)), None)


def _is_structural(text: str) -> bool:
    return _structural_kind(text) is not None


def _is_roman_pasal(text: str) -> bool:
    m = _PASAL.fullmatch(text)
    return bool(m and m.group("roman"))


def _roman(text: str) -> int:
    values = {"I": 1, "V": 5, "X": 10, "L": 50}
    return sum(-values[a] if values.get(b, 0) > values[a] else values[a] for a, b in zip(text, text[1:] + " "))


class _Numbering:
    """Which "Pasal N" lines are headings: numbers increase, by at most four in the body (a heading
    lost to OCR), freely inside an amendment ("Pasal I" quotes Pasal 14, 18, …); "Pasal I", "Pasal II"
    count on their own; PENJELASAN restarts everything."""

    def __init__(self) -> None:
        self.last: tuple[int, str] | None = None
        self.roman = 0
        self.amending = False

    def accept(self, text: str, zone: str) -> bool:
        m = _PASAL.fullmatch(text)
        if m.group("roman"):
            value = _roman(m.group("roman"))
            if value != self.roman + 1:
                return False
            self.roman, self.last, self.amending = value, None, value == 1
            return True
        key = (int(m.group("num")), m.group("suffix"))
        if self.last is None:
            fits = self.amending or key[0] <= 5 or zone == "penjelasan"
        else:
            fits = key > self.last and (self.amending or key[0] - self.last[0] <= 4)
        if fits:
            self.last = key
        return fits


def _classify(lines: list[_Line], stats: dict[str, int]) -> None:
    """Assign zones and recognise headings.

    "Pasal N" (or "BAB IV", "Bagian Kedua", "Paragraf 1") is a heading only when the line before
    does not run on into a reference ("… dimaksud dalam" / "Pasal 16") and, for a Pasal, the
    number fits the numbering (``_Numbering``). Fails when a wrapped reference follows a line
    that ends a sentence and carries the next number, and on OCR-damaged headings ("Pasa] 4").
    """
    zone, title_lines, prev_text = "title", 0, ""
    numbering = _Numbering()
    for i, line in enumerate(lines):
        if line.role != "text":
            continue
        text = line.text
        runs_on = _continues(prev_text)
        title_lines += zone == "title"
        if _LABEL.match(text) and zone in ("title", "preamble", "body"):
            zone = "body" if _LABEL.match(text).group("label") == "Menetapkan" else "preamble"
            line.heading = "label"
        elif _MEMUTUSKAN.fullmatch(text):
            zone, line.heading = "body", "memutuskan"
        elif _PENJELASAN.match(text) and text.isupper():
            zone, line.heading, numbering = "penjelasan", "penjelasan", _Numbering()
        elif _LAMPIRAN.match(text) and zone not in ("title", "preamble"):
            zone, line.heading = "lampiran", "lampiran"
        elif zone in ("title", "preamble", "body", "penjelasan") and _is_structural(text):
            if runs_on or (_PASAL.fullmatch(text) and not numbering.accept(text, zone)):
                stats["pasal_references"] += bool(_PASAL.fullmatch(text))
            else:
                line.heading = _structural_kind(text)
                zone = "body" if zone in ("title", "preamble") else zone
        elif numbering.amending and zone == "body" and _amends(lines, i, prev_text):
            line.heading = "amend"
        elif zone == "body" and (_AGAR.match(text) or _agar_split(lines, i)):
            line.heading = "agar"
        elif zone in ("body", "closing") and _CLOSING.match(text):
            zone, line.heading = "closing", "closing"
        elif zone == "penjelasan" and _PENJELASAN_SUB.fullmatch(text):
            line.heading = "sub"
        if zone == "title" and title_lines > 25:
            zone = "body"
        line.zone = zone
        prev_text = text
    stats["pasal_headings"] = sum(line.heading == "pasal" for line in lines)


def _amends(lines: list[_Line], i: int, prev_text: str) -> bool:
    """Whether line ``i`` opens an amendment instruction: a new sentence that names a change."""
    if not _AMEND_START.match(lines[i].text):
        return False
    after_sentence = _SENTENCE_END.search(_TRAILING_CLOSERS.sub("", prev_text)) or _MARKER_LINE.fullmatch(prev_text)
    if prev_text and not after_sentence:
        return False
    words = []
    for line in lines[i : i + 15]:
        if line.role == "text":
            words.append(line.text)
            if _SENTENCE_END.search(line.text):
                break
    return bool(_AMEND_VERB.search(" ".join(words)))


def _agar_split(lines: list[_Line], i: int) -> bool:
    """"Agar / setiap / orang" broken one word per line still opens the closing formula."""
    if lines[i].text != "Agar":
        return False
    words = [line.text for line in lines[i : i + 6] if line.role == "text"][:3]
    return " ".join(words).startswith("Agar setiap orang")


def _marker_key(kind: str, raw: str) -> tuple[int, str]:
    if kind == "letter":
        return ord(raw) - ord("a") + 1, ""
    digits = raw.rstrip("abcdefghijklmnopqrstuvwxyz")
    return int(digits), raw[len(digits) :]


def _marker_kind(m: re.Match[str]) -> tuple[str, tuple[int, str]]:
    kind = next(k for k in ("ayat", "letter", "number") if m.group(k))
    return kind, _marker_key(kind, m.group(kind))


def _find_markers(lines: list[_Line], src: str) -> list[_Marker]:
    """Detach numbers alone on their line ("(2)", ": b.", "Menimbang : a.") from the body.

    A number line directly followed by a text line is that text's own number (kept, joined);
    one after "ayat", "huruf", "angka" is part of a reference ("pada ayat / (1)"). Title,
    closing and annex lines are left alone: tables number their rows with "1." cells. A
    leading ":" or label stays in place ("Menimbang :").
    """
    markers: list[_Marker] = []
    prev_text = ""
    for i, line in enumerate(lines):
        if line.role != "text":
            continue
        m = _MARKER_LINE.fullmatch(line.text)
        reference = _takes_number(prev_text) and not m.group("label") if m else False
        prev_text = line.text
        if not m or line.zone not in _MARKED_ZONES or reference or line.term is None:
            continue
        nxt = lines[i + 1] if i + 1 < len(lines) else None
        if nxt is not None and nxt.role == "text" and not _MARKER_LINE.fullmatch(nxt.text) and not nxt.heading:
            line.marker_only, line.inline = True, _marker_kind(m)
            continue
        kind, key = _marker_kind(m)
        pos, end = line.lo + m.start("m"), line.lo + m.end("m")
        after = end if end < len(src) and src[end] in " \n\f" else line.term
        markers.append(_Marker(pos, end - pos, kind, key, i, after))
        keep = m.end("colon") if m.group("colon") else m.end("label") if m.group("label") else 0
        if keep:
            line.hi, line.text = line.lo + keep, line.text[:keep]
        else:
            line.role = "marker"
    return markers


def _mark_inline(lines: list[_Line]) -> None:
    """Record numbers already at the start of their text ("(2) Dalam hal", "a. bahwa", "Menimbang : a. bahwa")."""
    prev_text = ""
    for line in lines:
        if line.role != "text":
            continue
        text = line.text
        if line.heading == "label" and (m := _LABEL_INLINE.match(text)):
            kind = "letter" if m.group("letter") else "number"
            line.inline = (kind, _marker_key(kind, m.group(kind)))
        elif line.inline is None and line.zone in _MARKED_ZONES and line.heading in (None, "amend"):
            ayat, listed = _INLINE_AYAT.match(text), _INLINE_LIST.match(text)
            if ayat and not (_takes_number(prev_text) or _continues(prev_text)):
                line.inline = ("ayat", _marker_key("ayat", ayat.group(1)))
            elif listed and not _takes_number(prev_text):
                kind = "letter" if listed.group("letter") else "number"
                line.inline = (kind, _marker_key(kind, listed.group(kind)))
        prev_text = text


def _follows(prev: tuple[int, str] | None, key: tuple[int, str]) -> bool:
    """Whether ``key`` comes right after ``prev``: (1) → (1a) → (2); a → b; nothing → (1) / a / 1."""
    if prev is None:
        return key == (1, "")
    number, suffix = prev
    return key == (number + 1, "") or (key[0] == number and key[1] == (chr(ord(suffix) + 1) if suffix else "a"))


def _in_sequence(keys: list[tuple[int, str]], prev: tuple[int, str] | None = None) -> bool:
    for key in keys:
        if not _follows(prev, key):
            return False
        prev = key
    return True


def _ends_item(text: str) -> bool:
    return bool(_ITEM_END.search(_TRAILING_CLOSERS.sub("", text)))


def _sections(lines: list[_Line]) -> list[tuple[int, int]]:
    """(heading line, end) of every Pasal; a body ends at the next heading, instruction or zone change."""
    out: list[tuple[int, int]] = []
    open_at: int | None = None
    for i, line in enumerate(lines):
        if line.role != "text":
            continue
        if open_at is not None and (line.heading in _SECTION_ENDS or line.zone not in ("body", "penjelasan")):
            out.append((open_at, i))
            open_at = None
        if line.heading == "pasal":
            open_at = i
    if open_at is not None:
        out.append((open_at, len(lines)))
    return out


def _pasal_items(lines: list[_Line], body: list[int], kind: str) -> list[int]:
    """Lines that start an ayat: the first line, a numbered one, and a capital after a sentence end."""
    items: list[int] = []
    prev: _Line | None = None
    for i in body:
        line = lines[i]
        if prev is None or (line.inline and line.inline[0] == kind):
            items.append(i)
        elif (
            not line.inline
            and not prev.marker_only
            and _SENTENCE_END.search(_TRAILING_CLOSERS.sub("", prev.text))
            and line.text[:1].isupper()
        ):
            items.append(i)
        prev = line
    return items


def _runs(markers: list[_Marker], kind: str, lines: list[_Line]) -> list[list[_Marker]]:
    """Detached numbers of one kind with no text between them, split where the numbering restarts."""
    runs: list[list[_Marker]] = []
    last = -1
    for marker in markers:
        if marker.kind != kind:
            continue
        between = any(lines[j].role == "text" and lines[j].text != ":" for j in range(last + 1, marker.line))
        if runs and not between and _follows(runs[-1][-1].key, marker.key):
            runs[-1].append(marker)
        else:
            runs.append([marker])
        last = marker.line
    return runs


def _fill(lines: list[_Line], items: list[int], run: list[_Marker]) -> list[int] | None:
    """The unnumbered items ``run`` numbers: as many as its numbers, and no gap with the inline ones."""
    free = [i for i in items if not lines[i].inline]
    if len(free) != len(run):
        return None
    kind = run[0].kind
    numbered = [(i, lines[i].inline[1]) for i in items if lines[i].inline and lines[i].inline[0] == kind]
    numbered += zip(free, (m.key for m in run))
    return free if _in_sequence([key for _, key in sorted(numbered)]) else None


def _attach(lines: list[_Line], run: list[_Marker], targets: list[int], stats: dict[str, int]) -> set[int]:
    for marker, i in zip(run, targets):
        lines[i].inserts.append((marker.pos, marker.length, marker.after, " "))
        lines[i].inline = (marker.kind, marker.key)
        lines[i].item = lines[i].item or marker.kind == "ayat"
    stats["markers_reattached"] += len(run)
    return {id(m) for m in run}


def _place_amendments(lines: list[_Line], markers: list[_Marker], stats: dict[str, int]) -> set[int]:
    """Number the instructions of an amending "Pasal I" ("Ketentuan Pasal 14 diubah …").

    Its detached numbers are taken in reading order from "1." until the numbering restarts
    (the next "1." belongs to Pasal II) and fit only if there are as many as unnumbered
    instructions. Fails when columns put an instruction inside the Pasal it amends.
    """
    romans = [i for i, line in enumerate(lines) if line.heading == "pasal" and _is_roman_pasal(line.text)]
    placed: set[int] = set()
    for head, end in zip(romans, [*romans[1:], len(lines)]):
        items = [i for i in range(head, end) if lines[i].heading == "amend"]
        chain: list[_Marker] = []
        for marker in (m for m in markers if m.kind == "number" and head < m.line < end):
            if chain and marker.key == (1, ""):
                break
            chain.append(marker)
        free = _fill(lines, items, chain) if chain and items else None
        if free is not None:
            placed |= _attach(lines, chain, free, stats)
    return placed


def _place_lists(lines: list[_Line], markers: list[_Marker], stats: dict[str, int]) -> set[int]:
    """Give detached "b." / "5." inside a Pasal to the unnumbered list items after them.

    The run must continue the inline numbering before it (a., then b.) and, with the inline
    number after it, leave no gap. Its items are the lines after it that follow an item end
    (";", "; dan", "."), up to the next number of that kind, the next detached run or the end
    of the list. Fails when an item runs on after a sentence end.
    """
    placed: set[int] = set()
    sections = _sections(lines)
    for kind in ("letter", "number"):
        for run in _runs(markers, kind, lines):
            section = next(((h, e) for h, e in sections if h < run[0].line < e), None)
            if section is None:
                continue
            later = [m.line for m in markers if m.kind == kind and m.line > run[-1].line]
            targets = _list_items(lines, run, section[0], min([*later[:1], section[1]]))
            if targets is not None:
                placed |= _attach(lines, run, targets, stats)
    return placed


def _list_items(lines: list[_Line], run: list[_Marker], head: int, end: int) -> list[int] | None:
    kind = run[0].kind
    ahead = _text_indices(lines, head + 1, run[0].line)
    numbered = [i for i in ahead if lines[i].inline and lines[i].inline[0] == kind]
    prev_key = lines[numbered[-1]].inline[1] if numbered else None
    if not _follows(prev_key, run[0].key):
        return None
    after = _text_indices(lines, run[-1].line + 1, end)
    opener = lines[ahead[-1]].text if ahead else ""
    if ahead and not _ends_item(opener):
        # The run fell inside an item (a page break): its items start once that item ends.
        k = next((n for n in range(1, len(after)) if _ends_item(lines[after[n - 1]].text)), None)
        if k is None:
            return None
        opener, after = lines[after[k - 1]].text, after[k:]
    if not after or lines[after[0]].inline or lines[after[0]].heading:
        return None
    lower = lines[after[0]].text[:1].islower()
    items, next_key = [after[0]], None
    final = bool(_LIST_LAST.search(opener))  # the item after "…; dan" is the list's last
    for j, i in zip(after, after[1:]):
        line, prev = lines[i], lines[j]
        if line.inline:
            next_key = line.inline[1] if line.inline[0] == kind else next_key
            if line.inline[0] in (kind, "ayat"):
                break
            continue
        if not _ends_item(prev.text):
            continue
        capital = line.text[:1].isupper()
        if capital and (final or (lower and _SENTENCE_END.search(prev.text))):
            break
        if final or line.text[:1].islower() != lower:
            continue
        items.append(i)
        final = bool(_LIST_LAST.search(prev.text))
    keys = [m.key for m in run] + ([next_key] if next_key else [])
    return items if len(items) == len(run) and _in_sequence(keys, prev_key) else None


def _place_ayat(lines: list[_Line], markers: list[_Marker], stats: dict[str, int], kind: str = "ayat") -> set[int]:
    """Give each run of detached ayat numbers to the Pasal whose unnumbered ayat it fits.

    A page's number column comes out before, or inside, the Pasals it numbers, so runs and
    Pasals are paired in reading order: a run that does not start at (1) continues the run
    before it (the column went on over a page); a run goes to the first later Pasal that has
    not ended before it, begins at most a page after it, and that ``_fill`` accepts. A Pasal
    passed over stays unnumbered and a run that fits none is dropped: no guessing. Fails when
    an ayat lacks its final period or holds two sentences (miscounted), or when two Pasals on
    a page have the same count and only one of their runs survived. With ``kind="number"`` it
    numbers the items of an amending regulation's "Pasal II" ("1.", "2.") the same way.
    """
    runs: list[list[_Marker]] = []
    for run in _runs([m for m in markers if lines[m.line].zone in ("body", "penjelasan")], kind, lines):
        if run[0].key != (1, "") and runs and _follows(runs[-1][-1].key, run[0].key):
            runs[-1].extend(run)
        else:
            runs.append(run)
    waiting = []
    for head, end in _sections(lines):
        if kind == "number" and not _is_roman_pasal(lines[head].text):
            continue
        items = _pasal_items(lines, _text_indices(lines, head + 1, end), kind)
        if len(items) >= 2 and any(not lines[i].inline for i in items):
            waiting.append((head, end, items))
    placed: set[int] = set()
    for run in runs:
        at = run[0].line
        for n, (head, end, items) in enumerate(waiting):
            if lines[head].page > lines[at].page + 1:
                break
            free = _fill(lines, items, run) if end > at else None
            if free is not None:
                placed |= _attach(lines, run, free, stats)
                del waiting[: n + 1]
                break
    return placed


def _place_pasal_ii(lines: list[_Line], markers: list[_Marker], stats: dict[str, int]) -> set[int]:
    return _place_ayat(lines, markers, stats, kind="number")


def _place_preamble(lines: list[_Line], markers: list[_Marker], stats: dict[str, int]) -> set[int]:
    """Letter the Menimbang clauses ("bahwa …") and number the Mengingat items (each ending ";").

    Mengingat items start after the last clause's ";" (or after its label when there are no
    clauses); detached numbers fit under ``_fill``'s rule. The Mengingat label is moved in
    front of its first item when extraction put it among the Menimbang clauses. Fails on
    clauses that do not start with "bahwa" or items that do not end with ";".
    """
    pre = [i for i, line in enumerate(lines) if line.role == "text" and line.zone == "preamble"]
    clauses: list[int] = []
    labels: dict[str, int] = {}
    prev: _Line | None = None
    for i in pre:
        line = lines[i]
        if line.heading == "label":
            labels[_LABEL.match(line.text).group("label")] = i
        opens = prev is None or prev.heading == "label" or prev.text == ":" or _ends_item(prev.text)
        if opens and line.text.lstrip(": ").lower().startswith("bahwa"):
            clauses.append(i)
        prev = line
    if clauses:
        start = next((i for i in pre if i >= clauses[-1] and lines[i].text.endswith(";")), None)
    else:
        start = labels.get("Mengingat")
    grounds: list[int] = []
    prev = None
    for i in pre:
        line = lines[i]
        if start is None or i <= start or line.heading or line.text == ":":
            continue
        if prev is None or (prev.text.endswith(";") and (line.text[:1].isupper() or line.inline)):
            grounds.append(i)
        prev = line
    placed: set[int] = set()
    for kind, items in (("letter", clauses), ("number", grounds)):
        run = [m for m in markers if m.kind == kind and lines[m.line].zone == "preamble"]
        free = _fill(lines, items, run) if run else None
        if free is not None:
            placed |= _attach(lines, run, free, stats)
    for i in clauses + grounds:
        lines[i].item = True
    if clauses and grounds:
        _move_label(lines, labels.get("Mengingat"), clauses[-1], grounds[0], stats)
    return placed


def _move_label(
    lines: list[_Line], label: int | None, last_clause: int, first_ground: int, stats: dict[str, int]
) -> None:
    """Put a bare "Mengingat" label that was extracted among the Menimbang clauses before its first item."""
    if label is None or label > last_clause or lines[label].text.rstrip(" :") != "Mengingat":
        return
    source = lines[label]
    colon = next((j for j in range(label + 1, first_ground) if lines[j].role == "text"), None)
    if colon is not None and lines[colon].text == ":":
        pieces = [(source.lo, source.hi - source.lo, source.term, " "), (lines[colon].lo, 1, lines[colon].term, "\n")]
        lines[colon].role = "moved"
    else:
        pieces = [(source.lo, source.hi - source.lo, source.term, "\n")]
    source.role = "moved"
    lines[first_ground].inserts[:0] = pieces
    stats["labels_moved"] += 1
