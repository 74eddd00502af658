"""Which rule is in force, read from the documents: the status graph built at ingest, shown by `saksi corpus`, and
answers as of a date (contract 12: in force, or said to be history)."""
from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import json
import subprocess
import sys

import pytest
from docx import Document as Docx

from pipeline import catalog, status
from pipeline.analysis import query_analyzer
from pipeline.audit import file_hash
from pipeline.corpus import Corpus
from pipeline.replay import replay

from ..conftest import SAMPLE, require_regulations

pytestmark = pytest.mark.integration

RENT = "Berapa tarif pajak penghasilan atas persewaan tanah dan bangunan?"
STAMP = "Berapa tarif bea meterai contoh atas Dokumen Contoh?"


def _front(doc_id: str, title: str, cite_as: str, published: str, effective: str) -> str:
    return (f"---\nid: {doc_id}\ntitle: \"{title}\"\ndoc_type: regulation\ncite_as: {cite_as}\nauthority: official\n"
            f"published: {published}\neffective: {effective}\nlang: id\nillustrative: true\n---\n\n"
            "Dokumen ini fiktif, disusun untuk pengujian saksi.\n\n")


RATE = ("(1) Tarif bea meterai contoh atas Dokumen Contoh adalah sebesar {rate} dari nilai dokumen.\n\n"
        "(2) Bea meterai contoh sebagaimana dimaksud pada ayat (1) dibayar oleh pihak yang menerima dokumen.\n\n")
ORIGINAL = "Peraturan Menteri Contoh Nomor 1 Tahun 2020 tentang Bea Meterai Contoh"
AMENDMENT = f"Peraturan Menteri Contoh Nomor 2 Tahun 2022 tentang Perubahan atas {ORIGINAL}"


@contextlib.contextmanager
def _ingested(tmp_path_factory, profile, name: str, files: dict[str, str]):
    """The regulations `files` ({doc id: text}) ingested through the profile into a data directory of their own."""
    src = tmp_path_factory.mktemp(f"{name}-src")
    for doc_id, text in files.items():
        (src / f"{doc_id}.md").write_text(text, encoding="utf-8")
    corpus = Corpus(tmp_path_factory.mktemp(name), profile)
    try:
        corpus.ingest([src])
        yield corpus
    finally:
        corpus.close()


@pytest.fixture(scope="module")
def chain(tmp_path_factory, profile):
    """An original regulation (5%), an amendment of its Pasal 5 (7% from 2022), and a regulation that revokes both
    (9% from 1 April 2024), ingested through the real lite profile."""
    with _ingested(tmp_path_factory, profile, "chain", {
        "px-1-2020": _front("px-1-2020", ORIGINAL, "PX 1/2020", "2020-06-01", "2020-07-01")
        + "Pasal 5\n" + RATE.format(rate="5% (lima persen)")
        + "Pasal 6\nPeraturan Menteri ini mulai berlaku pada tanggal 1 Juli 2020.\n",
        "px-2-2022": _front("px-2-2022", AMENDMENT, "PX 2/2022", "2021-12-01", "2022-01-01")
        + f"Pasal I\nBeberapa ketentuan dalam {ORIGINAL} diubah sebagai berikut:\n\n"
        "1. Ketentuan ayat (1) Pasal 5 diubah, sehingga Pasal 5 berbunyi sebagai berikut:\n\n"
        + "Pasal 5\n" + RATE.format(rate="7% (tujuh persen)")
        + "Pasal II\nPeraturan Menteri ini mulai berlaku pada tanggal 1 Januari 2022.\n",
        "px-3-2024": _front("px-3-2024", "Peraturan Menteri Contoh Nomor 3 Tahun 2024 tentang Bea Meterai Contoh",
                            "PX 3/2024", "2024-03-01", "2024-04-01")
        + "Pasal 2\n" + RATE.format(rate="9% (sembilan persen)")
        + f"Pasal 8\n(1) Pada saat Peraturan Menteri ini mulai berlaku, {ORIGINAL} sebagaimana telah diubah dengan "
        f"{AMENDMENT}, dicabut dan dinyatakan tidak berlaku.\n\n"
        "(2) Peraturan Menteri ini mulai berlaku pada tanggal 1 April 2024.\n"}) as corpus:
        yield corpus


def test_a_documents_status_names_the_documents_its_references_resolve_to(chain):
    """What `subjects.related` reads: a regulation that names another (the amendment its original, the revoking one
    both) refers to it; the original names neither."""
    got = chain.store.status_of(["px-1-2020", "px-2-2022", "px-3-2024"])
    assert got["px-1-2020"].cites == ()
    assert got["px-2-2022"].cites == ("px-1-2020",)
    assert got["px-3-2024"].cites == ("px-1-2020", "px-2-2022")


def test_the_chain_s_status_edges_each_carry_their_receipt(chain):
    rows = catalog.status_edges(chain, on=dt.date(2025, 1, 1))
    got = {(r["kind"], r["source_path"], r["target_label"], r["date"]) for r in rows}
    assert got == {("amends", "PX 2/2022 › Pasal I › angka 1", "PX 1/2020 › Pasal 5", "2022-01-01"),
                   ("revokes", "PX 3/2024 › Pasal 8 › ayat (1)", "PX 1/2020", "2024-04-01"),
                   ("revokes", "PX 3/2024 › Pasal 8 › ayat (1)", "PX 2/2022", "2024-04-01"),
                   # the amendment item restating Pasal 5 ends with the law it amends (status._restatements_followed)
                   ("revokes", "PX 3/2024 › Pasal 8 › ayat (1)", "PX 2/2022 › Pasal I › angka 1 (Pasal 5)",
                    "2024-04-01")}
    texts = {c.chunk_id: c.text for d, _ in chain.store.documents() for c in chain.store.doc_chunks(d.doc_id)}
    for r in rows:  # the receipt is the source's exact words
        assert r["quote"] in texts[r["source_chunk"]]
        assert r["target_standing"]["state"] == "ended"


@pytest.mark.parametrize("on,rate,history", [
    ("2021-01-01", "5%", set()),             # the original alone is in force
    ("2023-01-01", "7%", {"5%"}),            # its Pasal 5 amended: the old rate is history
    ("2025-01-01", "9%", {"5%", "7%"}),      # both revoked by the new regulation
])
def test_answers_as_of_three_dates_lead_with_the_rule_in_force(chain, on, rate, history):
    result, trace = asyncio.run(chain.orchestrator().run(STAMP, as_of=dt.date.fromisoformat(on)))
    supported = [c for c in result.claims if c.status == "supported"]
    assert result.outcome == "answer" and result.as_of.date == on and result.as_of.source == "request"
    assert rate in supported[0].text and supported[0].standing.state == "in_force"
    ended = {r for c in supported if c.standing.state == "ended" for r in ("5%", "7%", "9%") if r in c.text}
    assert ended == history
    for c in supported:
        if c.standing.state != "in_force":
            assert c.confidence.band != "TINGGI"
            assert c.standing.state != "ended" or c.standing.edge.quote  # history names what ended it
    assert asyncio.run(replay(trace, query_analyzer(chain.profile))).same


LEVY = "Peraturan Menteri Contoh Nomor 4 Tahun 2018 tentang Pungutan Contoh"
PORT = "Berapa tarif pungutan contoh atas bongkar muat di pelabuhan contoh?"


@pytest.fixture(scope="module")
def revoked(tmp_path_factory, profile):
    """A regulation (a 3% levy) that a later one revokes from 1 March 2023 without restating anything of it."""
    with _ingested(tmp_path_factory, profile, "revoked", {
        "px-4-2018": _front("px-4-2018", LEVY, "PX 4/2018", "2018-02-01", "2018-03-01")
        + "Pasal 3\n(1) Tarif pungutan contoh atas bongkar muat di pelabuhan contoh adalah sebesar 3% (tiga persen) "
        "dari nilai jasa.\n\n(2) Pungutan contoh sebagaimana dimaksud pada ayat (1) disetor ke kas negara.\n\n"
        "Pasal 4\nPeraturan Menteri ini mulai berlaku pada tanggal 1 Maret 2018.\n",
        "px-5-2023": _front("px-5-2023", "Peraturan Menteri Contoh Nomor 5 Tahun 2023 tentang Penataan Pelabuhan "
                            "Contoh", "PX 5/2023", "2023-02-01", "2023-03-01")
        + "Pasal 1\nPelabuhan contoh dikelola oleh badan usaha pelabuhan.\n\n"
        + f"Pasal 2\n(1) Pada saat Peraturan Menteri ini mulai berlaku, {LEVY} dicabut dan dinyatakan tidak "
        "berlaku.\n\n(2) Peraturan Menteri ini mulai berlaku pada tanggal 1 Maret 2023.\n"}) as corpus:
        yield corpus


def test_a_graph_read_by_older_rules_is_read_again_by_the_next_ingest(tmp_path, profile):
    """After an upgrade that changes how the status graph is read (status.GRAPH_VERSION), running the ingest again
    re-reads the graph of a collection nothing else changed in, without re-ingesting a document."""
    src = tmp_path / "src"
    src.mkdir()
    (src / "px-4-2018.md").write_text(_front("px-4-2018", LEVY, "PX 4/2018", "2018-02-01", "2018-03-01")
                                      + "Pasal 3\nTarif pungutan contoh adalah sebesar 3% (tiga persen).\n",
                                      encoding="utf-8")
    (src / "px-5-2023.md").write_text(
        _front("px-5-2023", "Peraturan Menteri Contoh Nomor 5 Tahun 2023 tentang Pelabuhan Contoh", "PX 5/2023",
               "2023-02-01", "2023-03-01")
        + f"Pasal 2\nPada saat Peraturan Menteri ini mulai berlaku, {LEVY} dicabut dan dinyatakan tidak berlaku.\n",
        encoding="utf-8")
    corpus = Corpus(tmp_path / "data", profile)
    try:
        corpus.ingest([src])
        assert corpus.store.status_version() == status.GRAPH_VERSION
        edges = corpus.store.status_edges()
        assert [(e.kind, e.target_doc) for e in edges] == [("revokes", "px-4-2018")]
        corpus.store.set_status_edges([], status.GRAPH_VERSION - 1)  # as the rules before this version left it
        report = corpus.ingest([src])
        assert not report.ingested and len(report.unchanged) == 2  # nothing re-read or re-embedded
        assert corpus.store.status_edges() == edges and corpus.store.status_version() == status.GRAPH_VERSION
    finally:
        corpus.close()


def test_a_rule_found_only_as_history_is_not_shown_as_the_answer(revoked):
    """Contract 12: what a later regulation revoked is never the answer for a date after that. The only rule found
    is history on the date asked: a refusal that says so, its claim kept with its receipt and the provision that
    ended it."""
    result, trace = asyncio.run(revoked.orchestrator().run(PORT, as_of=dt.date(2026, 1, 1)))
    assert result.outcome == "refusal" and result.reason_code == "only_history" and result.direct is None
    assert "riwayat" in result.reason
    (old,) = [c for c in result.claims if c.status == "supported"]
    assert "3%" in old.text and old.standing.state == "ended" and old.confidence.band != "TINGGI"
    assert old.standing.edge.source_path == "PX 5/2023 › Pasal 2 › ayat (1)" and old.standing.until == "2023-03-01"
    assert asyncio.run(replay(trace, query_analyzer(revoked.profile))).same
    # the day before the revocation took effect the same rule is the answer, in force
    before, _ = asyncio.run(revoked.orchestrator().run(PORT, as_of=dt.date(2023, 2, 28)))
    assert before.outcome == "answer" and before.direct is not None
    assert next(c for c in before.claims if c.status == "supported").standing.state == "in_force"
    # before it took effect it is not yet in force: not the answer either
    early, _ = asyncio.run(revoked.orchestrator().run(PORT, as_of=dt.date(2017, 6, 1)))
    assert early.outcome == "refusal" and early.reason_code == "only_history"
    assert {c.standing.state for c in early.claims if c.status == "supported"} == {"not_yet"}


def test_the_revoked_rate_is_history_today_and_the_answer_for_a_year_it_was_in_force(lite_corpus):
    today, _ = asyncio.run(lite_corpus.orchestrator().run(RENT))
    supported = [c for c in today.claims if c.status == "supported"]
    assert "10%" in supported[0].text and supported[0].standing.state == "in_force"
    old = next(c for c in supported if "15%" in c.text)
    assert old.standing.state == "ended" and old.confidence.band != "TINGGI"
    assert old.standing.edge.source_path.startswith("PMI 7/2025") and "Pasal 9" in old.standing.edge.source_path
    conflict = next(c for c in today.conflicts if c.kind == "figures")
    assert supported[conflict.applies] is supported[0] and conflict.decided_by == old.standing.edge
    asked, _ = asyncio.run(lite_corpus.orchestrator().run(RENT.replace("?", " pada tahun 2024?")))
    first = next(c for c in asked.claims if c.status == "supported")
    assert "15%" in first.text and first.standing.state == "in_force"
    assert asked.as_of.date == "2024-12-31" and asked.as_of.words == "pada tahun 2024"


def _saksi(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pipeline.cli", *args], capture_output=True, text=True, timeout=300)


def test_corpus_show_and_status_list_the_shared_regulations_edges(tmp_path):
    regs = require_regulations()
    data = tmp_path / "d"
    assert _saksi("ingest", str(regs / "pmk-113-2025.md"), str(regs / "pmk-096-2025.md"), "--data-dir",
                  str(data)).returncode == 0
    out = _saksi("corpus", "status", "--data-dir", str(data), "--json")
    assert out.returncode == 0, out.stderr
    rows = json.loads(out.stdout)
    revoked = next(r for r in rows if r["source_doc"] == "pmk-113-2025")
    assert revoked["kind"] == "revokes" and revoked["target_label"] == "PMK 113/2008"
    assert revoked["target_doc"] is None and revoked["date"] == "2026-01-01"  # not in the collection: ends nothing
    assert "dicabut dan dinyatakan tidak berlaku" in revoked["quote"]
    amended = {r["target_pasal"] for r in rows if r["source_doc"] == "pmk-096-2025" and r["kind"] == "amends"}
    assert {"14", "18", "20"} <= amended
    shown = _saksi("corpus", "show", "PMK 113/2025", "--data-dir", str(data))
    assert shown.returncode == 0 and "legal status on" in shown.stdout and "revokes PMK 113/2008" in shown.stdout
    bad = _saksi("corpus", "status", "--on", "2025-13-01", "--data-dir", str(data))
    assert bad.returncode == 2 and "YYYY-MM-DD" in bad.stderr and "Traceback" not in bad.stderr


def test_an_export_names_its_trace_and_the_trace_replays(tmp_path):
    data = tmp_path / "d"
    assert _saksi("ingest", str(SAMPLE), "--data-dir", str(data)).returncode == 0
    for name in ("a.md", "a.docx"):
        out = _saksi("ask", RENT, "--data-dir", str(data), "--export", str(tmp_path / name))
        assert out.returncode == 0, out.stderr
    md = (tmp_path / "a.md").read_text(encoding="utf-8")
    trace_id = md.split("saksi replay ", 1)[1].split()[0]
    assert file_hash(data / "traces" / f"{trace_id}.json") in md  # the hash the audit log holds
    assert "10%" in md and "riwayat: dicabut" in md
    again = _saksi("replay", trace_id, "--data-dir", str(data))
    assert again.returncode == 0, again.stdout + again.stderr
    text = "\n".join(p.text for p in Docx(str(tmp_path / "a.docx")).paragraphs)
    assert "Jawaban langsung" in text and "PMI 3/2022" in text
    bad = _saksi("ask", RENT, "--data-dir", str(data), "--export", str(tmp_path / "a.pdf"))
    assert bad.returncode == 2 and ".md or a .docx" in bad.stderr
    nowhere = _saksi("ask", RENT, "--data-dir", str(data), "--export", str(tmp_path / "no" / "a.md"))
    assert nowhere.returncode == 2 and "no directory" in nowhere.stderr and "Traceback" not in nowhere.stderr


def test_a_name_no_record_mentions_is_said_and_keeps_the_answer_out_of_tinggi(lite_corpus):
    result, _ = asyncio.run(lite_corpus.orchestrator().run(RENT.replace("?", " di Singapura?")))
    assert result.unmentioned == ("Singapura",)
    supported = [c for c in result.claims if c.status == "supported"]
    assert supported and all(c.confidence.band != "TINGGI" for c in supported)
    assert any(c.confidence.capped_by == "unmentioned" for c in supported)  # the 10% read TINGGI without the name
    refused, _ = asyncio.run(lite_corpus.orchestrator().run("Berapa tarif bea masuk untuk impor mobil listrik?"))
    assert refused.outcome == "refusal" and "«mobil»" in refused.reason and "«listrik»" in refused.reason
    docs = [n.path.split(" › ")[0] for n in refused.nearest]
    assert len(set(docs)) == len(docs)  # one nearest record per document
