"""HTML: the page's main content as markdown-like text, without navigation and boilerplate.

Headings become "#" lines so the chunker sees sections; every block (paragraph, list
item, div) becomes its own paragraph, tables one line per row. Inline text is joined as
the browser would render it (no space is added between "Rp" and "<b>1.000</b>"), so
figures stay intact for the number check.
"""
from __future__ import annotations

import codecs
import importlib.util
import re
import unicodedata
from datetime import date, datetime
from pathlib import Path

from bs4 import BeautifulSoup, NavigableString, Tag
from bs4.dammit import EncodingDetector
from bs4.element import PreformattedString

from ...errors import IngestError
from . import ParsedText

_FEATURES = "lxml" if importlib.util.find_spec("lxml") else "html.parser"  # lxml: faster, more forgiving

_ALWAYS_DROP = frozenset({"script", "style", "noscript", "template", "nav", "aside", "button", "iframe", "svg",
                          "select"})
_FURNITURE_ROLES = frozenset({"navigation", "banner", "contentinfo", "complementary", "search"})
# id/class words that mark site furniture; matched against the parts of each token split on - and _
_BOILERPLATE = re.compile(r"^(nav|menu|breadcrumb|footer|header|sidebar|cookie|banner|share|social|advert)",
                          re.IGNORECASE)
_HEADINGS = {f"h{n}": n for n in range(1, 7)}
_BLOCKS = frozenset({
    "address", "article", "aside", "blockquote", "body", "center", "dd", "details", "dialog", "div",
    "dl", "dt", "fieldset", "figcaption", "figure", "footer", "form", "header", "hr", "html", "legend",
    "li", "main", "nav", "ol", "p", "section", "summary", "ul", *_HEADINGS,
})
_TABLE_PARTS = frozenset({"table", "caption", "tr", "td", "th"})
_WS = re.compile(r"\s+")
_DATE = re.compile(r"\s*(\d{4})[-/.](\d{1,2})[-/.](\d{1,2})")
_BR = object()  # marks a <br> in a run of inline text


def parse_html(path: Path, data: bytes) -> ParsedText:
    try:
        soup = BeautifulSoup(_decode(data), _FEATURES)
    except Exception as e:  # noqa: BLE001 - a tree builder's failure on bad input is an ingest error
        raise IngestError(str(path), f"not a readable HTML page: {type(e).__name__}: {e}") from None
    try:
        main = _main_element(soup)
        meta = _meta(soup, main)
        _drop_boilerplate(main)
        writer = _Writer()
        writer.walk(main)
        writer.flush()
    except RecursionError:
        raise IngestError(str(path), "HTML nested too deeply to read") from None
    text = unicodedata.normalize("NFC", "\n\n".join(writer.blocks))
    if not text.strip():
        raise IngestError(str(path), "no main content found in the HTML page")
    if _garbled(text):
        raise IngestError(str(path), "the HTML page does not decode to text (binary file, or a wrong "
                                     "charset declaration); save it as UTF-8 and ingest that")
    return ParsedText(text=text, fmt="html", meta=meta)


def _decode(data: bytes) -> str:
    """BOM, then the page's own charset declaration (bs4 finds both), then strict UTF-8, then
    windows-1252. No statistical guess: on short pages it picks exotic codecs and eats markup."""
    data, bom = EncodingDetector.strip_byte_order_mark(data)
    declared = EncodingDetector.find_declared_encoding(data, is_html=True)
    for encoding in (bom, declared, "utf-8"):
        if not encoding:
            continue
        try:
            name = codecs.lookup(encoding).name
            if encoding == declared and name in ("latin-1", "iso8859-1", "ascii"):
                encoding = "windows-1252"  # what browsers read these labels as
            elif encoding == declared and name.startswith(("utf-16", "utf-32")):
                encoding = "utf-8"  # a declaration readable as ASCII cannot be right (HTML spec)
            return data.decode(encoding).replace("\x00", "")
        except (LookupError, UnicodeDecodeError):
            continue
    return data.decode("windows-1252", errors="replace").replace("\x00", "")


def _main_element(soup: BeautifulSoup) -> Tag:
    """<main>, else <article>, else [role=main], else <body>: the first one not inside site furniture."""
    for candidates in (soup.find_all("main"), soup.find_all("article"), soup.find_all(attrs={"role": "main"})):
        for found in candidates:
            if not any(_is_furniture(parent, None) for parent in found.parents
                       if isinstance(parent, Tag) and parent.name not in ("body", "html")):
                return found
    return soup.body if isinstance(soup.body, Tag) else soup


def _drop_boilerplate(main: Tag) -> None:
    h1 = main.find("h1")
    for el in list(main.find_all(True)):
        if not el.decomposed and _is_furniture(el, h1):
            el.decompose()


def _is_furniture(el: Tag, h1: Tag | None) -> bool:
    """Whether `el` is site furniture rather than content.

    A <header>/<footer> inside an <article>, <main> or <section> belongs to that content (it
    usually holds the title), as the landmark rules of HTML have it. An element named as
    furniture only by its id/class/role is kept when it holds the page's first <h1>: content
    wrappers with unlucky names ("navbar-offset") must not take the content with them.
    """
    name = el.name
    if name in _ALWAYS_DROP:
        return True
    if name == "form":  # ASP.NET pages wrap the whole page in one <form>; drop only forms without prose
        return el.find(("p", "table", *_HEADINGS)) is None
    words = _furniture_words(el)
    if name in ("header", "footer") or words & {"header", "footer"}:
        if el.find_parent(("article", "main", "section")) is not None:
            return False
        if name in ("header", "footer"):
            return True
    elif not words and (el.get("role") or "").strip().lower() not in _FURNITURE_ROLES:
        return False
    return h1 is None or not (el is h1 or any(parent is el for parent in h1.parents))


def _furniture_words(el: Tag) -> set[str]:
    tokens = [el.get("id") or "", *(el.get("class") or [])]
    return {m[1].lower() for token in tokens for part in re.split(r"[-_\s]+", token)
            if (m := _BOILERPLATE.match(part))}


class _Writer:
    """Walks a tree and collects blocks of text; a pending list marker prefixes the next block."""

    def __init__(self) -> None:
        self.blocks: list[str] = []
        self.inline: list[str | object] = []
        self.prefix = ""

    def walk(self, node: Tag) -> None:
        for child in node.children:
            if isinstance(child, PreformattedString):  # comments, doctype, CDATA, processing instructions
                continue
            if isinstance(child, NavigableString):
                self.inline.append(str(child))
            elif isinstance(child, Tag):
                self.element(child)

    def element(self, el: Tag) -> None:
        name = el.name
        if name == "br":
            self.inline.append(_BR)
        elif name in _HEADINGS:
            self.flush()
            title = _flat(el)
            if title:
                self.blocks.append("#" * _HEADINGS[name] + " " + title)
        elif name in ("ol", "ul"):
            self.flush()
            self.list_items(el)
        elif name == "table" and not el.find(("table", *_HEADINGS)):  # a data table; layout tables are walked
            self.flush()
            rows = _table_rows(el)
            if rows:
                self.blocks.append("\n".join(rows))
        elif name == "pre":
            self.flush()
            lines = [line.rstrip() for line in el.get_text().strip("\n").splitlines()]
            if any(lines):
                self.emit("\n".join(lines))
        elif name in _BLOCKS or name in _TABLE_PARTS:  # blocks, and the parts of a layout table
            self.flush()
            self.walk(el)
            self.flush()
        else:
            self.walk(el)

    def list_items(self, lst: Tag) -> None:
        number = _int(lst.get("start"), 1)
        for li in lst.find_all("li", recursive=False):
            number = _int(li.get("value"), number)
            self.prefix = f"{number}. " if lst.name == "ol" else "- "
            self.walk(li)
            self.flush()
            self.prefix = ""
            number += 1

    def flush(self) -> None:
        lines = _lines(self.inline)
        self.inline = []
        if lines:
            self.emit(lines)

    def emit(self, text: str) -> None:
        self.blocks.append(self.prefix + text)
        self.prefix = ""


def _lines(parts: list[str | object]) -> str:
    """Inline runs to text: whitespace collapsed, <br> kept as a line break, a double <br> as a blank line."""
    segments, current = [], []
    for part in parts:
        if part is _BR:
            segments.append("".join(current))
            current = []
        else:
            current.append(part)
    segments.append("".join(current))
    lines = [_WS.sub(" ", s).strip() for s in segments]
    return re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip("\n")


def _flat(el: Tag) -> str:
    """All text of `el` on one line, with a space wherever a block or <br> would have broken it."""
    parts: list[str] = []

    def visit(node: Tag) -> None:
        for child in node.children:
            if isinstance(child, PreformattedString):
                continue
            if isinstance(child, NavigableString):
                parts.append(str(child))
            elif isinstance(child, Tag):
                block = child.name in _BLOCKS or child.name in _TABLE_PARTS or child.name == "br"
                if block:
                    parts.append(" ")
                visit(child)
                if block:
                    parts.append(" ")

    visit(el)
    return _WS.sub(" ", "".join(parts)).strip()


def _table_rows(table: Tag) -> list[str]:
    rows = []
    caption = table.find("caption", recursive=False)
    if caption is not None and _flat(caption):
        rows.append(_flat(caption))
    for tr in table.find_all("tr"):
        cells = [_flat(cell) for cell in tr.find_all(("td", "th"), recursive=False)]
        if any(cells):
            rows.append(" | ".join(cells))
    return rows


def _meta(soup: BeautifulSoup, main: Tag) -> dict:
    """What the page declares about itself; read before boilerplate removal, so the first <h1>
    can still stand in for a missing <title>."""
    declared: dict[str, str] = {}
    for tag in soup.find_all("meta"):
        key = (tag.get("name") or tag.get("property") or "").strip().lower()
        value = _WS.sub(" ", tag.get("content") or "").strip()
        if key and value:
            declared.setdefault(key, value)
    meta: dict = {}
    title_tag = soup.find("title")
    h1 = main.find("h1") or soup.find("h1")
    meta["title"] = (_flat(title_tag) if title_tag else "") or (_flat(h1) if h1 else "")
    html = soup.find("html")
    lang = (html.get("lang") or "").strip()[:2].lower() if isinstance(html, Tag) else ""
    if lang in ("id", "en"):
        meta["lang"] = lang
    canonical = soup.find("link", rel="canonical")
    meta["url"] = (canonical.get("href") or "").strip() if canonical else ""
    meta["url"] = meta["url"] or declared.get("og:url", "")
    for key in ("date", "article:published_time", "dcterms.date", "dc.date", "dcterms.issued"):
        published = _iso_date(declared.get(key, ""))
        if published:
            meta["published"] = published
            break
    meta["author"] = declared.get("author", "")
    meta["description"] = declared.get("description") or declared.get("og:description", "")
    return {key: value for key, value in meta.items() if value}


def _iso_date(value: str) -> str:
    """YYYY-MM-DD from an ISO-like date or timestamp; "" when it is not one."""
    try:
        return datetime.fromisoformat(value.strip()).date().isoformat()
    except ValueError:
        pass
    m = _DATE.match(value)
    if m:
        try:
            return date(int(m[1]), int(m[2]), int(m[3])).isoformat()
        except ValueError:
            return ""
    return ""


def _int(value: str | None, default: int) -> int:
    try:
        return int(value) if value is not None else default
    except ValueError:
        return default


def _garbled(text: str) -> bool:
    """More than 2% replacement or control characters: the bytes were not text in the charset used."""
    bad = sum(1 for ch in text if ch == "\ufffd" or (unicodedata.category(ch) == "Cc" and ch not in "\n\t"))
    return bad > 0.02 * len(text)
