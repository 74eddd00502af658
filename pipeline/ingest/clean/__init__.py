"""Clean layout noise out of extracted text, keeping a map back to where every character came from.

PDF extraction (pdftotext, pypdf) leaves page numbers glued to text, running headers, justified
text broken one word per line, hyphenated line ends, and the ayat and list numbers of a
regulation extracted as a separate column, far from the text they number. Quotes must stay
exact and citable, so cleaning never invents text: every character of the clean rendition is
copied from the source, or is a source line break shown as a space or a newline.

The map
    ``segments`` holds ``(clean_start, src_start, length)``: ``text[c:c+n]`` equals
    ``src[s:s+n]`` except that a source line break (``\\n``, or a ``\\f`` page break) may show
    as ``" "`` (joined lines) or ``"\\n"``. Segments are ordered, do not overlap and cover every
    clean character. A re-attached number is copied from where it was extracted together with
    the line break after it, which shows as the space after the number, so moved text needs no
    second kind of map; ``moved`` lists the indices of such segments, and ``source_span`` leaves
    them out of a span that also covers text in place. Deleted text (page furniture, hyphens,
    numbers that could not be placed) has no segment.

Each heuristic's docstring says where it fails.
"""
from __future__ import annotations

import re

from .furniture import _strip_glyphs_and_catchwords, _strip_page_numbers, _strip_running_lines
from .joining import _is_caps, _mark_title, _render
from .lines import CleanText, _split_lines
from .numbering import (_classify, _find_markers, _is_structural, _mark_inline, _place_amendments, _place_ayat,
                        _place_lists, _place_pasal_ii, _place_preamble)
from .patterns import _GLUED_PAGE, _MARKDOWN, _MARKER_LINE, _PAGE_LINE, _RUNS_ON, _STATS

__all__ = ["CleanText", "clean_text", "looks_extracted"]


def looks_extracted(text: str) -> bool:
    """Whether ``text`` reads like PDF-extracted text rather than an authored file.

    Form feeds or page numbers ("- 3 -", "-3Pasal 3", "Halaman 3 dari 9") decide it; Markdown
    structure (headings, tables, fences) says authored; otherwise it takes many hard-wrapped
    lines that run on in lower case, or many short lines that are not headings (text broken one
    word per line). An authored file with short headings and one paragraph per line is not
    extracted; authored prose hard-wrapped at a fixed width is (joining its lines is harmless).
    """
    if "\f" in text:
        return True
    lines = [line.strip() for line in text.split("\n")]
    if sum(bool(_PAGE_LINE.fullmatch(line) or _GLUED_PAGE.match(line)) for line in lines) >= 2:
        return True
    if any(_MARKDOWN.match(line) for line in lines):
        return False
    filled = [line for line in lines if line]
    if len(filled) < 10:
        return False
    wrapped = sum(1 for a, b in zip(lines, lines[1:]) if a and b[:1].islower() and not _RUNS_ON.search(a))
    broken = sum(1 for line in filled if len(line.split()) <= 3 and not _is_heading_like(line))
    return wrapped >= 0.3 * len(filled) or broken >= 0.4 * len(filled)


def _is_heading_like(line: str) -> bool:
    return _is_structural(line) or _is_caps(line) or bool(_MARKER_LINE.fullmatch(line)) or line.endswith(":")


def clean_text(text: str, extracted: bool | None = None) -> CleanText:
    """Clean extracted text (``extracted=None``: decided by ``looks_extracted``).

    Authored text comes back unchanged, with only its form-feed pages. Extracted text comes back
    one logical paragraph per line, structure on its own lines, furniture removed, detached
    numbers re-attached where that is unambiguous, and a map to the source.
    """
    if extracted is None:
        extracted = looks_extracted(text)
    if not extracted:
        pages = tuple(m.end() for m in re.finditer("\f", text) if m.end() < len(text))
        return CleanText(text, ((0, 0, len(text)),) if text else (), pages, dict.fromkeys(_STATS, 0))
    stats = dict.fromkeys(_STATS, 0)
    lines, page_starts = _split_lines(text)
    breaks = _strip_page_numbers(lines, text, page_starts, stats)
    _strip_running_lines(lines, stats)
    _strip_glyphs_and_catchwords(lines, stats)
    _classify(lines, stats)
    markers = _find_markers(lines, text)
    _mark_inline(lines)
    placed: set[int] = set()
    for place in (_place_amendments, _place_lists, _place_ayat, _place_pasal_ii, _place_preamble):
        placed |= place(lines, [m for m in markers if id(m) not in placed], stats)
    stats["markers_unplaced"] = len(markers) - len(placed)
    _mark_title(lines)
    return _render(text, lines, breaks, stats)
