"""A document's pages are bounded whatever the document's size (issue 27, the reference bomb): its text is read a
window at a time around the cited passage, its references a page at a time, and nothing is lost between windows or
pages (`pipeline/corpus/reading.py`)."""
from __future__ import annotations

from pathlib import Path

import pytest

from pipeline import catalog
from pipeline.backends.fakes import FakeHashEmbedder
from pipeline.corpus import Corpus
from pipeline.corpus.reading import REFS_SHOWN, WINDOW_CHARS, document_view, page_link, text_view, window
from pipeline.eval.poisoning import densest_regulation
from serve.web.evidence import pieces

DOC = "rujukan-padat"


@pytest.fixture(scope="module")
def corpus(tmp_path_factory, profile):
    src = tmp_path_factory.mktemp("dense") / f"{DOC}.md"
    src.write_text(densest_regulation(DOC), encoding="utf-8")
    with Corpus(tmp_path_factory.mktemp("data"), profile, embedder=FakeHashEmbedder()) as c:
        report = c.ingest([src])
        assert not report.errors, report.errors
        yield c


def _doc(corpus):
    return catalog.find_document(corpus, DOC)


def test_a_window_runs_from_one_passage_start_to_another_and_holds_the_cited_passage() -> None:
    starts = list(range(0, 200_000, 700))
    assert window(200_000, starts, None, None) == (0, 40_600)  # from the beginning, ending at a passage's start
    lo, hi = window(200_000, starts, (70_000, 70_700), None)
    assert lo in starts and hi in starts and lo <= 70_000 and 70_700 <= hi and hi - lo <= WINDOW_CHARS + 700
    assert lo < 70_000 - 10_000 and hi > 70_700 + 10_000  # text on either side of it
    assert window(200_000, starts, (70_000, 70_700), 100_350) == (100_100, 140_700)  # `at` wins: its passage's start
    assert window(200_000, starts, None, 199_999)[1] == 200_000
    lo, hi = window(200_000, [0, 1000, 150_000], (1000, 150_000), None)  # a passage longer than a window: all of it
    assert (lo, hi) == (1000, 150_000)


def test_the_text_is_read_a_window_at_a_time_and_the_windows_cover_it_once(corpus) -> None:
    doc = _doc(corpus)
    whole = Path(doc.rendition).read_text(encoding="utf-8")
    assert len(whole) > 4 * WINDOW_CHARS
    first = text_view(corpus, doc)
    assert first["span"][0] == 0 and first["length"] == len(whole)
    assert first["text"] == whole[slice(*first["span"])] and len(first["text"]) <= WINDOW_CHARS + 1_000
    refs = corpus.store.references(doc.doc_id)
    shown = {c.chunk_id for c in first["chunks"]}
    assert first["links"] and {link["chunk_id"] for link in first["links"]} <= shown and len(first["links"]) < len(refs)
    pieces_of, at = [], None
    while True:  # following "later text" from the beginning reads the whole text, each part once
        view = text_view(corpus, doc, at=at)
        pieces_of.append(view["text"])
        lo, hi = view["span"]
        if hi >= len(whole):
            break
        at = hi
    assert "".join(pieces_of) == whole and len(pieces_of) > 4


def test_a_cited_passage_is_shown_in_its_window_with_its_references(corpus) -> None:
    doc = _doc(corpus)
    chunks = corpus.store.doc_chunks(doc.doc_id)
    cited = chunks[len(chunks) // 2]
    view = text_view(corpus, doc, chunk_id=cited.chunk_id)
    lo, hi = view["span"]
    assert view["cited"] == cited and lo <= cited.start and cited.end <= hi and lo > 0
    assert cited.chunk_id in {c.chunk_id for c in view["chunks"]}
    mine = [r for r in corpus.store.references(doc.doc_id) if r.chunk_id == cited.chunk_id]
    assert len(mine) >= 10 and len([x for x in view["links"] if x["chunk_id"] == cited.chunk_id]) == len(mine)
    # elsewhere in the text, the cited passage is still named (the page's receipt) though not shown
    far = text_view(corpus, doc, chunk_id=cited.chunk_id, at=0)
    assert far["cited"] == cited and far["span"][1] <= cited.start


def test_a_window_is_cut_as_the_whole_text_would_be(corpus) -> None:
    """pieces() over a window gives exactly the pieces of the whole text that lie in it (offsets the document's)."""
    doc = _doc(corpus)
    whole = Path(doc.rendition).read_text(encoding="utf-8")
    chunks = corpus.store.doc_chunks(doc.doc_id)
    cited = chunks[100]
    view = text_view(corpus, doc, chunk_id=cited.chunk_id)
    lo, hi = view["span"]
    every = [page_link(r) for r in corpus.store.references(doc.doc_id)]
    highlight = (cited.start + 5, cited.start + 60)
    full = [p for p in pieces(whole, chunks, every, highlight) if lo <= p.start < hi]
    part = pieces(view["text"], view["chunks"], view["links"], highlight, lo)
    assert [(p.text, p.start, p.highlight, p.link, p.page, p.anchors) for p in part] == \
        [(p.text, p.start, p.highlight, p.link, p.page, p.anchors) for p in full]
    assert any(p.link for p in part) and any(p.highlight for p in part)


def test_references_are_listed_a_page_at_a_time_with_their_totals(corpus) -> None:
    report = catalog.show(corpus, DOC)
    total = len(report["references"]["out"])
    assert total > 3 * REFS_SHOWN
    first = document_view(corpus, report)
    refs = first["references"]
    assert refs["out_total"] == total and len(refs["out"]) == REFS_SHOWN and refs["from"] == 0
    assert refs["out"][0]["from"].startswith("Peraturan") or "Pasal" in refs["out"][0]["from"]
    seen = []
    for k in range(0, total, REFS_SHOWN):
        seen += [(r["chunk_id"], r["ordinal"]) for r in document_view(corpus, report, k)["references"]["out"]]
    assert seen == [(r["chunk_id"], r["ordinal"]) for r in report["references"]["out"]]  # every one, once, in order
    assert first["has_text"] and all(o["chunk_id"] for o in first["outline"])
    assert len(first["outline"]) == len(report["outline"])
