"""The trace view and the corpus view over the served application (serve/web/trace_view.py and
corpus_view.py): every lane's candidates with the trace's own scores, the raw generator output,
each gate's decision per claim, replay; the documents of `GET /v1/corpus`, a document's outline and
references, and uploads (curators only). One answer is asked once and reused."""
from __future__ import annotations

import pytest
import requests
from bs4 import BeautifulSoup

QUESTION = "Berapa tarif pajak penghasilan atas persewaan tanah dan bangunan?"
UPLOAD_ID = "web-view-upload-test"
UPLOAD = f"""---
id: {UPLOAD_ID}
title: Catatan unggahan uji halaman korpus
doc_type: guidance
lang: id
---

# Catatan unggahan uji

1. Catatan ini hanya dipakai oleh uji halaman korpus dan dihapus lagi sesudahnya.
""".encode()


def page(app, path: str, method: str = "GET", key: str | None = None, lang: str | None = None,
         **kw) -> tuple[int, BeautifulSoup]:
    """A page as a browser without cookies gets it with a bearer key (pages accept one)."""
    r = requests.request(method, app.base + path, headers={"Authorization": f"Bearer {key or app.key}"},
                         cookies={"saksi_lang": lang} if lang else None, allow_redirects=False, timeout=120, **kw)
    return r.status_code, BeautifulSoup(r.text, "html.parser")


def files(*named: tuple[str, bytes]) -> list:
    return [("files", (name, data, "application/octet-stream")) for name, data in named]


@pytest.fixture(scope="module")
def answered(app) -> tuple[str, dict, BeautifulSoup]:
    """One answer's trace id, its trace as the API sends it, and its trace page."""
    status, body, _ = app.call("POST", "/v1/answer", {"question": QUESTION})
    assert status == 200 and body["outcome"] == "answer", body
    trace_id = body["trace_id"]
    status, trace, _ = app.call("GET", f"/v1/traces/{trace_id}")
    assert status == 200, trace
    status, soup = page(app, f"/ui/traces/default/{trace_id}")
    assert status == 200
    return trace_id, trace, soup


@pytest.fixture(scope="module")
def keys(served_corpus) -> dict[str, str]:
    from pipeline.keys import KeyStore

    store = KeyStore(served_corpus[0])
    return {role: store.create(role, ["default"], name=f"web views {role}")[1] for role in ("reader", "curator")}


def attempts(trace: dict):
    for part in trace["parts"]:
        for a in part["attempts"]:
            yield part, a


def test_the_trace_page_has_every_lanes_candidates_with_the_traces_scores_and_ranks(answered) -> None:
    _, trace, soup = answered
    for part, a in attempts(trace):
        where = f"{part['index']}-{a['attempt']}"
        for lane in ("dense", "lexical", "sparse"):
            expected = {c["chunk"]["chunk_id"]: (c[f"{lane}_rank"], c[f"{lane}_score"]) for c in a["candidates"]
                        if c[f"{lane}_rank"] is not None or c[f"{lane}_score"] is not None}
            table = soup.select_one(f"table#lane-{lane}-{where}")
            if lane == "sparse" and not expected:
                assert table is None  # the lite profile has no sparse lane
                continue
            assert table is not None and "lane" in table["class"] and table["data-lane"] == lane
            rows = table.select("tr.candidate")
            got = {tr["data-chunk"]: (int(tr["data-rank"]) if tr["data-rank"] else None, float(tr["data-score"]))
                   for tr in rows}
            assert got == expected and expected  # every candidate of the lane, with the trace's numbers
            ranks = [int(tr["data-rank"]) for tr in rows if tr["data-rank"]]
            assert ranks == sorted(ranks) and ranks[0] == 1  # in the lane's own order
            assert all(tr.select_one("a[href^='/ui/documents/default/']") for tr in rows)
        for c in a["candidates"]:  # why a candidate went no further is on its rows
            rows = f"#attempt-{where} table.lane tr[data-chunk='{c['chunk']['chunk_id']}']"
            marks = soup.select(f"{rows} .dropped-reason")
            assert [m["data-dropped"] for m in marks] == [c["dropped"]] * len(marks) if c["dropped"] else not marks
        rerank = soup.select_one(f"table.rerank#rerank-{where}")
        by_id = {c["chunk"]["chunk_id"]: c for c in a["candidates"]}
        rows = rerank.select("tr.reranked")
        assert [tr["data-chunk"] for tr in rows] == a["reranked"]
        for tr in rows:
            c = by_id[tr["data-chunk"]]
            assert float(tr["data-rerank-score"]) == c["rerank_score"]
            shown = {td["data-component"] for td in tr.select("td[data-component]")}
            assert shown == {k for k in c["rerank_components"] if not (k.startswith("w_") and k[2:] in
                                                                         c["rerank_components"])}
            for td in tr.select("td[data-component]"):
                assert float(td["data-value"]) == c["rerank_components"][td["data-component"]]


def test_the_trace_page_shows_the_analysis_the_raw_output_and_each_gates_decision_per_claim(answered) -> None:
    _, trace, soup = answered
    part = trace["parts"][0]
    row = soup.select_one(f"table#parts tr.part[data-part='{part['index']}']")
    assert row["data-route"] == part["route"]["name"]
    assert [c["data-category"] for c in row.select("td.required [data-category]")] == part["route"]["required"]
    for part, a in attempts(trace):
        where = f"{part['index']}-{a['attempt']}"
        section = soup.select_one(f"section.attempt#attempt-{where}")
        assert section.select_one(".query-text").get_text() == a["query"]["text"]
        assert section.select_one("pre.raw").get_text() == a["generator_output"]["raw"]  # exactly as recorded
        claims = section.select("li.gate-claim")
        assert [li["data-status"] for li in claims] == [c["status"] for c in a["claims"]] and claims
        for li, c in zip(claims, a["claims"]):
            assert [(tr["data-chunk"], tr["data-ok"] == "true") for tr in li.select("tr.gate-citation")] == \
                [(x["chunk_id"], x["ok"]) for x in c["citations"]]
            assert li.select_one(".verdict")["data-label"] == ((c["verdict"] or {}).get("label") or "")
            if c["confidence"]:
                assert float(li.select_one(".confidence")["data-value"]) == c["confidence"]["value"]
            assert [x["data-reason"] for x in li.select(".reasons li")] == [r.split(":")[0] for r in c["reasons"]]
        assert len(section.select("tr.judge-call")) == len(a["judge_calls"])
        assert section.select_one("dl.sufficiency")["data-missing"] == " ".join(a["sufficiency"]["missing"])
    # the decision said in the page's language (Indonesian here); the trace file records it in English
    supported = sum(c[2] == "supported" for c in trace["decision"]["claims"])
    assert trace["why"].startswith(f"answered: {supported} supported claim(s)")
    assert soup.select_one("#why").get_text().startswith(f"terjawab: {supported} klaim didukung")
    assert soup.select_one("#decision-outcome")["data-outcome"] == trace["decision"]["outcome"]
    assert soup.select_one("#decision-outcome").get_text() == "jawaban"


def test_replay_reruns_todays_gates_on_the_recorded_output_and_reaches_the_same_decision(app, answered) -> None:
    trace_id, _, soup = answered
    form = soup.select_one("form#replay")
    assert form["method"] == "post" and form["action"] == f"/ui/traces/default/{trace_id}/replay"
    assert "no retrieval, no model" in page(app, f"/ui/traces/default/{trace_id}", lang="en")[1] \
        .select_one("#replay-help").get_text()
    assert soup.select_one("#replay-result") is None  # only after a replay
    status, replayed = page(app, form["action"], "POST")
    assert status == 200
    result = replayed.select_one("#replay-result")
    assert result["data-same"] == "true" and replayed.select_one("#replay-differences") is None
    assert replayed.select("table.lane")  # the trace is shown again below the result


def test_replay_says_when_todays_gates_reach_another_decision(app, answered, served_corpus) -> None:
    import json
    import uuid

    from pipeline.corpus import DataDir

    trace_id, trace, _ = answered
    traces = DataDir(served_corpus[0]).traces
    changed = json.loads((traces / f"{trace_id}.json").read_text(encoding="utf-8"))
    changed["trace_id"] = uuid.uuid4().hex
    changed["decision"]["claims"][0][2] = "unsupported"  # as if the gates had demoted the first claim then
    path = traces / f"{changed['trace_id']}.json"
    path.write_text(json.dumps(changed), encoding="utf-8")
    try:
        status, soup = page(app, f"/ui/traces/default/{changed['trace_id']}/replay", "POST", lang="en")
    finally:
        path.unlink()
    assert status == 200
    assert soup.select_one("#replay-result")["data-same"] == "false"
    differences = [li.get_text() for li in soup.select("#replay-differences li")]
    assert len(differences) == 1 and "recorded not supported" in differences[0]


def test_an_unknown_trace_or_document_is_a_404_page(app) -> None:
    for path, method in ((f"/ui/traces/default/{'0' * 32}", "GET"), (f"/ui/traces/default/{'0' * 32}/replay", "POST"),
                         ("/ui/documents/default/no-such-doc", "GET"), ("/ui/corpus?collection=nope", "GET")):
        status, soup = page(app, path, method)
        assert status == 404 and soup.select_one("#error")["data-status"] == "404", path


def test_the_corpus_page_lists_every_document_of_the_api(app) -> None:
    status, corpus, _ = app.call("GET", "/v1/corpus")
    assert status == 200
    status, soup = page(app, "/ui/corpus")
    assert status == 200
    rows = {tr["data-doc"]: tr for tr in soup.select("table#documents tr.document")}
    assert set(rows) == {d["doc_id"] for d in corpus["items"]}
    for d in corpus["items"]:
        tr = rows[d["doc_id"]]
        link = tr.select_one("a.doc-link")
        assert link["href"] == f"/ui/documents/default/{d['doc_id']}"
        assert link.get_text(strip=True) == (d["cite_as"] or d["doc_id"])
        assert tr.select_one("td.chunks").get_text(strip=True) == str(d["chunks"])
        assert tr.select_one("td.ocr")["data-pages"] == ",".join(map(str, d["pages_without_text"]))
        assert tr.select_one("td.unresolved").get_text(strip=True) == (str(d["unresolved_references"])
                                                                        if d["unresolved_references"] else "—")
        assert [a.get_text() for a in tr.select("td:last-child a")] == d["near_duplicates_with"]
    assert soup.select_one("#corpus-counts")["data-documents"] == str(corpus["documents"])
    upload = soup.select_one("form#upload")  # the shared key is an admin: it may upload
    assert upload["enctype"] == "multipart/form-data" and upload["action"] == "/ui/corpus/default/upload"


def test_a_document_page_has_its_outline_references_near_duplicates_and_ocr_pages(app) -> None:
    _, corpus, _ = app.call("GET", "/v1/corpus")
    # PMI 7/2025: passages shared with PMI 3/2022, and references to it (resolved: the sample holds it)
    doc = next(d for d in corpus["items"] if d["doc_id"] == "pmi-7-2025")
    assert doc["near_duplicates_with"] == ["pmi-3-2022"]
    status, soup = page(app, f"/ui/documents/default/{doc['doc_id']}")
    assert status == 200 and soup.select_one("article")["data-doc"] == doc["doc_id"]
    entries = soup.select("#outline li.outline-entry")
    assert entries and all(li["data-chunk"] for li in entries)
    base = f"/ui/documents/default/{doc['doc_id']}/text?chunk="
    for li in entries:
        assert li.a["href"] == f"{base}{li['data-chunk']}#hl"
    status, evidence = page(app, entries[-1].a["href"].split("#")[0])  # the unit's first passage, highlighted
    assert status == 200 and evidence.select_one("mark#hl") is not None
    assert evidence.select_one(f"#chunk-{entries[-1]['data-chunk']}") is not None
    refs = soup.select("#refs-out tr.ref")
    unresolved = [tr for tr in refs if tr["data-status"] == "unresolved"]
    assert len(unresolved) == doc["unresolved_references"]
    assert all(tr.select_one(".reason").get_text(strip=True) for tr in unresolved)
    assert all(tr.select_one("a.ref-target") for tr in refs if tr["data-status"] == "resolved")
    assert any("PMI 3/2022" in tr.get_text() for tr in refs if tr["data-status"] == "resolved")
    assert soup.select_one("#refs-in") is not None
    assert [li["data-doc"] for li in soup.select("#near-duplicates li.near-duplicate")] == doc["near_duplicates_with"]
    assert soup.select_one("#ocr-pages")["data-pages"] == ",".join(map(str, doc["pages_without_text"]))
    assert soup.select_one("#metadata tr[data-field='doc_id']") is not None
    assert soup.select_one("a#full-text")["href"] == f"/ui/documents/default/{doc['doc_id']}/text"
    assert soup.select_one("a#download")["href"] == f"/ui/documents/default/{doc['doc_id']}/original"


def test_the_text_from_an_offset_is_a_window_with_a_way_back_and_the_whole_text_has_none(app) -> None:
    """`?at=` (the "later text" link of a long document) starts the window at the passage holding that offset; the
    page says which characters it shows and links to the text before. The sample's documents fit one window."""
    base = "/ui/documents/default/pmi-7-2025/text"
    status, whole = page(app, base)
    assert status == 200 and whole.select_one("[data-testid=window-top]") is None
    status, later = page(app, f"{base}?at=600")
    assert status == 200
    nav = later.select_one("[data-testid=window-top]")
    assert nav is not None and nav.select_one("a.earlier")["href"].startswith("?at=0")
    assert nav.select_one("a.later") is None  # the rest of the document fits the window
    shown = later.select_one("#text").get_text()
    assert 0 < len(shown) < len(whole.select_one("#text").get_text()) and whole.select_one("#text").get_text().endswith(shown)
    status, _ = page(app, f"{base}?at=-1")
    assert status == 422


def test_a_reader_sees_no_upload_form_and_may_not_upload(app, keys) -> None:
    status, soup = page(app, "/ui/corpus", key=keys["reader"])
    assert status == 200 and soup.select("tr.document") and soup.select_one("form#upload") is None
    status, soup = page(app, "/ui/corpus/default/upload", "POST", key=keys["reader"],
                        files=files(("note.md", UPLOAD)))
    assert status == 403 and soup.select_one("#error")["data-type"] == "forbidden"
    assert UPLOAD_ID not in {d["doc_id"] for d in app.call("GET", "/v1/corpus")[1]["items"]}


def test_a_curator_uploads_a_markdown_file_and_sees_it_ingested(app, keys) -> None:
    try:
        status, soup = page(app, "/ui/corpus/default/upload", "POST", key=keys["curator"],
                            files=files(("catatan-uji.md", UPLOAD)))
        assert status == 200, soup.get_text()[:500]
        result = soup.select_one("#upload-result")
        assert result["data-ingested"] == "1" and result["data-skipped"] == "0"
        assert soup.select_one(f"table#documents tr.document[data-doc='{UPLOAD_ID}']") is not None
        assert UPLOAD_ID in {d["doc_id"] for d in app.call("GET", "/v1/corpus")[1]["items"]}
        status, soup = page(app, "/ui/corpus/default/upload", "POST", key=keys["curator"],
                            files=files(("catatan-uji.md", UPLOAD)))  # the same file again: unchanged
        assert status == 200 and soup.select_one("#upload-result")["data-unchanged"] == "1"
    finally:  # the session's corpus is shared: leave it as it was
        status, body, _ = app.call("DELETE", f"/v1/documents/{UPLOAD_ID}")
    assert status == 200, body


def test_an_upload_the_api_would_refuse_is_a_typed_error_page(app, keys) -> None:
    status, soup = page(app, "/ui/corpus/default/upload", "POST", key=keys["curator"],
                        files=files(("program.exe", b"MZ")))
    assert status == 422 and soup.select_one("#error")["data-type"] == "invalid_request"
    assert "file name" in soup.select_one("#error").get_text()
    status, soup = page(app, "/ui/corpus/default/upload", "POST", key=keys["curator"], data={"nothing": "x"})
    assert status == 422 and soup.select_one("#error") is not None
    status, _ = page(app, "/ui/corpus/default/upload", "POST", key=keys["curator"],
                     files=files(("big.txt", b"x" * 2_100_000)))  # over max_upload_bytes (2 MB)
    assert status == 413


def test_both_languages_render(app, answered) -> None:
    trace_id = answered[0]
    for lang, title, corpus in (("en", "Answer trace", "Corpus"), ("id", "Jejak jawaban", "Korpus")):
        status, soup = page(app, f"/ui/traces/default/{trace_id}", lang=lang)
        assert status == 200 and soup.html["lang"] == lang and soup.h1.get_text().startswith(title)
        status, soup = page(app, "/ui/corpus", lang=lang)
        # (other tests of the session may have made more collections: the heading then names this one)
        assert status == 200 and soup.h1.get_text(strip=True).split("·")[0].strip() == corpus
        status, soup = page(app, "/ui/documents/default/pmi-7-2025", lang=lang)
        assert status == 200 and soup.html["lang"] == lang
