"""Fusion and candidate hygiene: RRF against a naive reference, dedup and per-source cap."""
from __future__ import annotations

import random
from dataclasses import replace

import pytest

from pipeline.retrieval import order_versions, dedup_and_cap, jaccard, rrf
from pipeline.types import Candidate, Chunk

pytestmark = pytest.mark.unit


# --------------------------------------------------------------------------- rrf


def naive_rrf(rankings: dict[str, list[str]], k: int) -> dict[str, float]:
    """Straight from the definition: for each item, sum 1/(k + rank) over the lanes that list it."""
    items = []
    for lane in rankings.values():
        for item in lane:
            if item not in items:
                items.append(item)
    out = {}
    for item in items:
        total = 0.0
        for lane in rankings.values():
            if item in lane:
                total += 1.0 / (k + lane.index(item) + 1)
        out[item] = total
    return out


def test_rrf_hand_computed():
    scores = rrf({"dense": ["a", "b", "c"], "lexical": ["c", "a"]}, k=60)
    assert scores["a"] == pytest.approx(1 / 61 + 1 / 62)
    assert scores["b"] == pytest.approx(1 / 62)          # only in one lane
    assert scores["c"] == pytest.approx(1 / 63 + 1 / 61)
    assert set(scores) == {"a", "b", "c"}


def test_rrf_matches_naive_reference_on_random_rankings():
    rng = random.Random(20240501)
    pool = [f"c{i}" for i in range(60)]
    for _ in range(300):
        n_lanes = rng.randint(1, 4)
        rankings = {f"lane{j}": rng.sample(pool, rng.randint(0, 25)) for j in range(n_lanes)}
        k = rng.choice([1, 10, 60, 100])
        got = rrf(rankings, k=k)
        want = naive_rrf(rankings, k)
        assert set(got) == set(want)
        for item, score in want.items():
            assert got[item] == pytest.approx(score, rel=1e-12)
        # orders agree too (ties broken by id, as the retriever does)
        assert sorted(got, key=lambda i: (-got[i], i)) == sorted(want, key=lambda i: (-want[i], i))


def test_rrf_item_in_one_lane_is_scored_by_that_lane_alone():
    rng = random.Random(7)
    for _ in range(100):
        dense = rng.sample(range(100), 20)
        lexical = rng.sample(range(100), 20)
        rankings = {"dense": [str(x) for x in dense], "lexical": [str(x) for x in lexical]}
        got = rrf(rankings, k=60)
        only_dense = set(rankings["dense"]) - set(rankings["lexical"])
        for item in only_dense:
            assert got[item] == pytest.approx(1 / (60 + rankings["dense"].index(item) + 1))


def test_rrf_higher_in_both_lanes_scores_higher():
    scores = rrf({"a": ["x", "y"], "b": ["x", "y"]}, k=60)
    assert scores["x"] > scores["y"]


def test_rrf_empty():
    assert rrf({}, k=60) == {}
    assert rrf({"dense": [], "lexical": []}) == {}


def test_rrf_default_k_is_60():
    assert rrf({"x": ["a"]})["a"] == pytest.approx(1 / 61)


# --------------------------------------------------------------------------- dedup and cap


def _chunk(cid: str, doc: str, text: str) -> Chunk:
    return Chunk(chunk_id=cid, doc_id=doc, title=doc, location="Pasal 1", text=text, lang="id",
                 unit=f"{doc}#Pasal 1", ordinal=0, start=0, end=len(text))


def _cand(cid: str, doc: str, text: str, score: float = 0.0) -> Candidate:
    return Candidate(chunk=_chunk(cid, doc, text), rrf_score=score)


TEXT_A = ("Tarif Pajak Penghasilan atas penghasilan dari persewaan tanah dan bangunan adalah sebesar "
          "sepuluh persen dari jumlah bruto nilai persewaan tanah dan bangunan tersebut")
TEXT_B = ("Pajak yang telah dipotong wajib disetor ke kas negara paling lambat tanggal sepuluh bulan "
          "berikutnya setelah masa pajak berakhir oleh pemotong pajak yang bersangkutan")
TEXT_C = ("Wajib Pajak yang terlambat menyampaikan Surat Pemberitahuan dikenai sanksi administratif berupa "
          "denda sebesar satu juta rupiah untuk setiap surat pemberitahuan tahunan")


def _dup_of(c: Candidate) -> str | None:
    """The chunk id a near-duplicate points at: named in the drop reason (same document) or marked
    (another document, kept citable); None when not a duplicate."""
    if c.near_duplicate_of is not None:
        assert c.dropped is None  # another document's version stays citable
        return c.near_duplicate_of
    if c.dropped is None or "duplicate" not in c.dropped:
        return None
    return c.dropped.split()[-1]


def test_near_duplicate_marked_with_the_kept_chunk_named():
    cands = [
        _cand("a1", "doc1", TEXT_A, 0.9),
        _cand("b1", "doc2", TEXT_B, 0.8),
        _cand("a2", "doc3", "  " + TEXT_A.replace(" ", "\n", 3) + "  ", 0.7),  # same words, other layout
        _cand("a3", "doc4", TEXT_A.upper(), 0.6),                              # case differs only
    ]
    out = dedup_and_cap(cands, threshold=0.9, per_source=5)
    assert [c.chunk.chunk_id for c in out] == ["a1", "b1", "a2", "a3"]
    assert out[0].dropped is None and out[1].dropped is None
    assert _dup_of(out[2]) == "a1"
    assert _dup_of(out[3]) == "a1"


def test_distinct_texts_are_not_duplicates():
    cands = [_cand("a", "d1", TEXT_A), _cand("b", "d1", TEXT_B), _cand("c", "d2", TEXT_C)]
    out = dedup_and_cap(cands, threshold=0.9, per_source=5)
    assert all(c.dropped is None for c in out)


def test_threshold_governs_near_duplicates():
    # change the last word: most shingles shared, but not all
    variant = TEXT_A.rsplit(" ", 1)[0] + " itu"
    cands = [_cand("a", "d1", TEXT_A), _cand("v", "d2", variant)]
    strict = dedup_and_cap(cands, threshold=1.0, per_source=5)
    loose = dedup_and_cap(cands, threshold=0.5, per_source=5)
    assert strict[1].dropped is None
    assert _dup_of(loose[1]) == "a"


def _two_documents() -> list[Candidate]:
    """Five distinct passages from docX and five from docY, interleaved x0, y0, x1, y1, …"""
    texts = [TEXT_A, TEXT_B, TEXT_C, "Peraturan ini mulai berlaku pada tanggal diundangkan dan wajib diketahui.",
             "Ketentuan lebih lanjut mengenai tata cara pemotongan diatur dengan Peraturan Direktur Jenderal."]
    cands = []
    for i, t in enumerate(texts):
        cands.append(_cand(f"x{i}", "docX", t))
        cands.append(_cand(f"y{i}", "docY", t + " (versi lain dokumen Y dengan kata kata berbeda sama sekali)"))
    return cands


def test_per_source_cap_marks_extras_and_keeps_order():
    cands = _two_documents()
    out = dedup_and_cap(cands, threshold=1.0, per_source=2)
    assert [c.chunk.chunk_id for c in out] == [c.chunk.chunk_id for c in cands]  # nothing removed, order kept
    kept = [c.chunk.chunk_id for c in out if c.dropped is None]
    assert kept == ["x0", "y0", "x1", "y1"]
    for c in out:
        if c.dropped is not None:
            assert "per-source cap" in c.dropped and c.dropped.split()[-1] == c.chunk.doc_id


def test_a_named_document_is_not_capped_and_the_others_still_are():
    out = dedup_and_cap(_two_documents(), threshold=1.0, per_source=2, uncapped={"docX"})
    assert [c.chunk.chunk_id for c in out if c.dropped is None] == ["x0", "y0", "x1", "y1", "x2", "x3", "x4"]
    assert all("per-source cap" in c.dropped for c in out if c.chunk.chunk_id in ("y2", "y3", "y4"))
    # near-duplicates within the named document are still dropped
    dup = dedup_and_cap([_cand("a", "docX", TEXT_A), _cand("a-dup", "docX", TEXT_A)], threshold=0.9, per_source=2,
                        uncapped={"docX"})
    assert _dup_of(dup[1]) == "a"


def test_duplicates_do_not_use_up_the_cap():
    cands = [_cand("a", "d1", TEXT_A), _cand("a-dup", "d1", TEXT_A), _cand("b", "d1", TEXT_B),
             _cand("c", "d1", TEXT_C)]
    out = dedup_and_cap(cands, threshold=0.9, per_source=2)
    assert [c.dropped is None for c in out] == [True, False, True, False]
    assert _dup_of(out[1]) == "a"
    assert "per-source cap" in out[3].dropped


def test_dedup_preserves_other_fields():
    c = Candidate(chunk=_chunk("a", "d", TEXT_A), dense_score=0.8, dense_rank=1, lexical_score=3.2,
                  lexical_rank=2, rrf_score=0.03)
    dup = Candidate(chunk=_chunk("b", "d", TEXT_A), dense_score=0.7, dense_rank=2, lexical_score=3.0,
                    lexical_rank=3, rrf_score=0.02)
    out = dedup_and_cap([c, dup], threshold=0.9, per_source=5)
    assert out[0] == c
    assert out[1].dense_score == 0.7 and out[1].lexical_rank == 3 and out[1].rrf_score == 0.02
    assert out[1].chunk is dup.chunk


def test_dedup_empty():
    assert dedup_and_cap([], threshold=0.9, per_source=5) == []


def test_jaccard():
    assert jaccard(frozenset({1, 2}), frozenset({2, 3})) == pytest.approx(1 / 3)
    assert jaccard(frozenset(), frozenset()) == 1.0


def test_near_duplicate_in_the_same_document_is_dropped_in_another_kept_and_marked():
    cands = [_cand("a1", "doc1", TEXT_A, 0.9), _cand("a2", "doc1", TEXT_A + " ", 0.8),
             _cand("a3", "doc2", TEXT_A, 0.7)]
    out = dedup_and_cap(cands, threshold=0.9, per_source=5)
    assert out[1].dropped == "near-duplicate of a1" and out[1].near_duplicate_of is None
    assert out[2].dropped is None and out[2].near_duplicate_of == "a1"


def test_versions_are_ordered_by_authority_then_freshness_and_both_kept():
    def ranked(cid, doc, authority, published, score):
        c = _cand(cid, doc, TEXT_A, score)
        return replace(c, chunk=replace(c.chunk, authority=authority, published=published), rerank_score=score)

    old = ranked("old", "pmk-2019", "official", "2019-01-01", 0.9)
    media = replace(ranked("blog", "blog", "media", "2025-06-01", 0.8), near_duplicate_of="old")
    new = replace(ranked("new", "pmk-2025", "official", "2025-01-01", 0.7), near_duplicate_of="old")
    other = _cand("x", "d9", TEXT_B, 0.75)
    out = order_versions([old, media, other, new])
    # the group keeps its places (1st, 2nd, 4th); within it: official before media, newer before older
    assert [c.chunk.chunk_id for c in out] == ["new", "old", "x", "blog"]
    assert order_versions([old, other]) == [old, other]  # nothing to reorder without a marked pair


# --------------------------------------------------------------------------- freshness in the rerank blend


def test_an_undated_record_reads_the_dated_candidates_median_freshness_unless_its_source_is_unknown():
    from pipeline.backends.blend import _freshness

    def dated(cid, published, authority="official"):
        c = _cand(cid, f"doc-{cid}", TEXT_A, 0.5)
        return replace(c, chunk=replace(c.chunk, published=published, authority=authority))

    laws = [dated("a", "2000-01-01"), dated("b", "2010-01-01"), dated("c", "2020-01-01")]
    span = 20 * 365 + 5  # days from 2000-01-01 to 2020-01-01
    assert _freshness(laws) == pytest.approx([0.0, 1 - (3652 / span), 1.0])
    # a regulation whose text carries no date was ranked as the oldest of all; it now reads the middle
    got = _freshness([*laws, dated("pp", None)])
    assert got[3] == pytest.approx(got[1]) and 0.0 < got[3] < 1.0
    # an even count: the mean of the two middle ones
    assert _freshness([laws[0], laws[2], dated("pp", None)])[2] == pytest.approx(0.5)
    # an upload whose date was withheld (a key that may assert nothing) gains no date by the back door
    assert _freshness([*laws, dated("up", None, authority="unknown")])[3] == 0.0
    assert _freshness([dated("x", None), dated("y", None)]) == [0.0, 0.0]  # nothing dated: nothing to compare
    assert _freshness([dated("x", "2021-05-05"), dated("y", "2021-05-05")]) == [1.0, 1.0]
