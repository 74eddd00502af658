"""The reviewer's page over the served application: signing in, asking, the answer with its
receipts, the evidence in place and the reviewer's decisions (the browser journeys are in
tests/browser/; the trace and corpus pages in test_web_views.py)."""
from __future__ import annotations

import json
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest
import requests
from bs4 import BeautifulSoup

from serve.web.evidence import locate, pieces

from ..conftest import SAMPLE
from serve.web.labels import WEB, labels, reason_words

ANSWERED = "Berapa tarif pajak penghasilan atas persewaan tanah dan bangunan?"
REFUSED = "Berapa tarif bea masuk untuk impor mobil listrik?"


# --- without a server ---------------------------------------------------------------------------


def test_both_languages_have_every_label() -> None:
    assert WEB["id"].keys() == WEB["en"].keys()
    assert WEB["id"]["reasons"].keys() == WEB["en"]["reasons"].keys()
    assert labels("en")["ask_submit"] == "Ask" and labels("id")["ask_submit"] == "Tanya"
    assert labels("xx")["lang"] == "id"  # anything else is the default language


def test_a_demotion_reason_reads_as_words_with_its_detail() -> None:
    assert reason_words("judge_below_threshold: 0.412 < 0.5", "en") == \
        "judge: support below the threshold (0.412 < 0.5)"
    assert reason_words("number_without_basis", "id") == "angka tanpa dasar di kutipan"
    assert reason_words("something_new: x", "en") == "something_new: x"  # unknown: shown as it is


def test_a_quote_is_found_verbatim_or_across_line_breaks() -> None:
    text = "Pasal 3\n(1) Tarif pajak adalah\n10% dari jumlah bruto."
    assert locate(text, "Tarif pajak adalah\n10%") == (text.index("Tarif"), text.index("% dari") + 1)
    at = locate(text, "“Tarif pajak adalah 10% dari jumlah bruto.”")  # curly quotes off, one space for a newline
    assert at is not None and text[at[0]:at[1]] == "Tarif pajak adalah\n10% dari jumlah bruto."
    assert locate(text, "tarif 15%") is None
    assert locate(text, "   ") is None


def test_the_text_is_cut_where_pages_links_and_the_highlight_begin_and_end() -> None:
    from pipeline.types import Chunk

    text = "AAAA Pasal 2 BBBB CCCC"
    chunk = Chunk(chunk_id="c1", doc_id="d", title="t", location="Pasal 1", text=text, lang="id", unit="d#Pasal 1",
                  ordinal=0, start=0, end=len(text), page=(3, 4), page_breaks=(13,))
    link = {"chunk_id": "c1", "start": 5, "end": 12, "status": "resolved", "target_doc": "d", "target_chunk": "c2",
            "target_label": "Pasal 2", "reason": None, "raw": "Pasal 2"}
    out = pieces(text, [chunk], [link], highlight=(10, 17))
    assert "".join(p.text for p in out) == text  # nothing lost, nothing repeated
    assert out[0].anchors == ["c1"] and out[0].page == 3
    linked = [p for p in out if p.link]
    assert "".join(p.text for p in linked) == "Pasal 2"
    marked = [p for p in out if p.highlight]
    assert "".join(p.text for p in marked) == text[10:17]
    assert [p.first_highlight for p in marked] == [True] + [False] * (len(marked) - 1)
    breaks = [p for p in out if p.page_break]
    assert [(p.start, p.page_break) for p in breaks] == [(0, 3), (13, 4)]  # the first page shown is marked too
    assert {p.page for p in marked} == {3, 4}  # the quote runs over the page break


def test_each_piece_lies_in_the_first_reference_that_holds_it_as_a_scan_of_every_reference_finds() -> None:
    """The evidence view's one sweep gives each piece the reference a scan of all references gives it (the scan was
    quadratic in a document's references: issue 27's reference bomb), nested and touching references included."""
    import random

    from pipeline.types import Chunk

    rng = random.Random(27)
    text = "x" * 2000
    chunk = Chunk(chunk_id="c1", doc_id="d", title="t", location="Pasal 1", text=text, lang="id", unit="d#Pasal 1",
                  ordinal=0, start=0, end=len(text))
    links = []
    for i in range(300):
        a = rng.randrange(0, 1990)
        links.append({"chunk_id": "c1", "start": a, "end": a + rng.randrange(1, 10), "status": "resolved",
                      "target_doc": "d", "target_chunk": f"t{i}", "target_label": f"Pasal {i}", "reason": None,
                      "raw": "Pasal"})
    out = pieces(text, [chunk], links, highlight=(100, 900))
    assert "".join(p.text for p in out) == text
    for p in out:
        end = p.start + len(p.text)
        expected = next((r for r in links if r["start"] <= p.start and end <= r["end"]), None)
        assert p.link is expected, (p.start, end)


def test_a_page_that_begins_with_a_chunk_is_marked_too() -> None:
    from pipeline.types import Chunk

    def chunk(i: int, start: int, end: int, page: tuple[int, int]) -> Chunk:
        return Chunk(chunk_id=f"c{i}", doc_id="d", title="t", location=f"Pasal {i}", text="x" * (end - start),
                     lang="id", unit=f"d#Pasal {i}", ordinal=i, start=start, end=end, page=page)

    text = "x" * 30
    out = pieces(text, [chunk(2, 20, 30, (2, 2)), chunk(1, 0, 10, (1, 1)), chunk(3, 10, 20, (1, 1))], [], None)
    assert [(p.start, p.page_break) for p in out if p.page_break] == [(20, 2)]
    assert [p.page for p in out] == [1, 1, 2]


# --- against the served application -------------------------------------------------------------


@pytest.fixture(scope="module")
def site(app):
    """A browser-like session signed in with the shared admin key (cookies kept, redirects not followed)."""
    s = requests.Session()
    s.headers["Origin"] = app.base
    r = s.post(app.base + "/ui/signin", data={"key": app.key, "next": "/"}, allow_redirects=False)
    assert r.status_code == 303 and r.headers["location"] == "/"
    return s


def html(r: requests.Response) -> BeautifulSoup:
    return BeautifulSoup(r.text, "html.parser")


def ask(app, site: requests.Session, question: str) -> str:
    """The answer page's address after asking through the form."""
    r = site.post(app.base + "/ui/ask", data={"question": question, "collection": "default"}, allow_redirects=False)
    assert r.status_code == 303, r.text[:500]
    assert r.headers["location"].startswith("/ui/answers/default/")
    return r.headers["location"]


@pytest.fixture(scope="module")
def answered(app, site) -> tuple[str, BeautifulSoup]:
    where = ask(app, site, ANSWERED)
    r = site.get(app.base + where)
    assert r.status_code == 200
    return where, html(r)


def test_a_page_without_a_key_sends_the_browser_to_sign_in(app) -> None:
    r = requests.get(app.base + "/", allow_redirects=False)
    assert r.status_code == 303 and r.headers["location"] == "/ui/signin"
    r = requests.get(app.base + "/ui/corpus?collection=default", allow_redirects=False)
    assert r.status_code == 303
    assert parse_qs(urlsplit(r.headers["location"]).query)["next"] == ["/ui/corpus?collection=default"]
    r = requests.get(app.base + "/v1/corpus", allow_redirects=False)  # the API stays JSON
    assert r.status_code == 401 and r.json()["error"]["type"] == "unauthorized"
    assert requests.get(app.base + "/ui/static/saksi.css").status_code == 200  # public, like /healthz


def test_signing_in_keeps_the_key_in_a_strict_httponly_cookie_and_signing_out_drops_it(app) -> None:
    s = requests.Session()
    form = html(s.get(app.base + "/ui/signin?next=/ui/corpus"))  # the page a redirect lands on
    assert form.select_one("form#signin input#key[name=key][type=password]") is not None
    assert form.select_one("form#signin input[name=next]")["value"] == "/ui/corpus"
    r = s.post(app.base + "/ui/signin", data={"key": "saksi_000000000000_" + "x" * 40, "next": "/"},
               allow_redirects=False)
    assert r.status_code == 401 and html(r).select_one("#signin-problem") is not None
    assert "saksi_key" not in s.cookies
    r = s.post(app.base + "/ui/signin", data={"key": app.key, "next": "//elsewhere.example/x"}, allow_redirects=False)
    assert r.status_code == 303 and r.headers["location"] == "/"  # never a redirect off the site
    cookie = r.headers["set-cookie"].lower()
    assert "httponly" in cookie and "samesite=strict" in cookie and "path=/" in cookie
    assert s.get(app.base + "/", allow_redirects=False).status_code == 200
    r = s.post(app.base + "/ui/signout", allow_redirects=False)
    assert r.status_code == 303 and r.headers["location"] == "/ui/signin"
    assert s.get(app.base + "/", allow_redirects=False).status_code == 303


def test_a_form_sent_from_another_site_is_refused(app, site) -> None:
    r = site.post(app.base + "/ui/ask", data={"question": ANSWERED}, headers={"Origin": "http://evil.example"},
                  allow_redirects=False)
    assert r.status_code == 403 and r.json()["error"]["type"] == "forbidden"
    # signing in from another site would sign this browser in with the other site's key (login CSRF): refused too
    r = requests.post(app.base + "/ui/signin", data={"key": app.key, "next": "/"}, allow_redirects=False,
                      headers={"Origin": "http://evil.example"}, timeout=30)
    assert r.status_code == 403 and "set-cookie" not in r.headers
    r = requests.post(app.base + "/ui/signout", allow_redirects=False, headers={"Origin": "http://evil.example"},
                      timeout=30)
    assert r.status_code == 403


def test_the_answer_page_shows_the_apis_answer_with_bands_breakdowns_and_receipts(app, answered) -> None:
    where, page = answered
    status, api, _ = app.call("POST", "/v1/answer", {"question": ANSWERED})
    assert status == 200
    article = page.select_one("article[data-testid=answer]")
    assert article["data-outcome"] == api["outcome"] == "answer"
    shown = page.select("#claims li.claim")
    supported = [c for c in api["claims"] if c["status"] == "supported"]
    assert [li.select_one(".claim-text").get_text(strip=True) for li in shown] == [c["text"] for c in supported]
    assert [li["data-band"] for li in shown] == [c["band"] for c in supported]
    first, claim = shown[0], supported[0]
    parts = {dd["data-part"]: dd for dd in first.select("details.breakdown dd[data-part]")}
    assert parts["retrieval"].select_one(".value").get_text(strip=True) == \
        f"{claim['confidence_breakdown']['retrieval']:.3f}"
    assert parts["generator"].select_one(".value").get_text(strip=True) == \
        f"{claim['confidence_breakdown']['generator']:.3f}"
    # each part says in words what it measures; the lite rule's match is not called entailment
    assert all(dd.select_one(".explain").get_text(strip=True) for dd in parts.values())
    assert "kata demi kata" in parts["judge"].get_text() and "entailment" not in first.get_text()
    link = first.select_one("a.citation")
    cite = claim["citations"][0]
    assert link.get_text(strip=True).startswith(cite["path"])
    assert first.select_one("blockquote").get_text(strip=True) == f"“{cite['quote']}”"
    # the conflicting 15% of the 2022 version is shown side by side
    assert page.select("#conflicts .side-by-side .side")
    assert page.select_one("a#trace-link")["href"] == where.replace("/answers/", "/traces/")


def test_a_term_two_regulations_define_is_shown_from_both_under_its_own_heading(app, site) -> None:
    """Both illustrative regulations define "Wajib Pajak" (Pasal 1 huruf a): neither is picked silently."""
    where = ask(app, site, "Apa yang dimaksud dengan Wajib Pajak?")
    page = html(site.get(app.base + where))
    section = page.select_one("#ambiguous")
    assert section is not None and section.select_one("h2").get_text(strip=True) == labels("id")["ambiguous"]
    sides = section.select(".side-by-side .side")
    paths = [[a.get_text(strip=True) for a in side.select("a.citation")] for side in sides]
    assert len(sides) == 2 and {p[0].split(" › ")[0] for p in paths} == {"PMI 7/2025", "PMI 3/2022"}
    assert all(any(x.endswith("Pasal 1 › huruf a") for x in p) for p in paths)  # each cited to its entry
    assert page.select_one("#conflicts") is None  # not records that disagree on a figure


def test_a_citation_opens_the_document_at_the_quote_highlighted(app, site, answered) -> None:
    _, page = answered
    link = page.select_one("#claims li.claim a.citation")
    quote = page.select_one("#claims li.claim blockquote").get_text(strip=True).strip("“”")
    r = site.get(app.base + link["href"].split("#")[0])
    assert r.status_code == 200
    ev = html(r)
    marks = ev.select("#text mark")
    assert marks and marks[0].get("id") == "hl"
    assert " ".join("".join(m.get_text() for m in marks).split()) == " ".join(quote.split())
    assert ev.select_one("[data-testid=path]").get_text(strip=True) == link.get_text(strip=True)
    assert ev.select("#text a.xref")  # "sebagaimana dimaksud pada ayat (1)" … link to their passages
    got = site.get(app.base + ev.select_one("a#download")["href"])
    name = got.headers["content-disposition"].split("filename=")[1].strip('"')
    assert got.status_code == 200 and got.content == (SAMPLE / name).read_bytes()  # the file as ingested
    assert ev.select_one("a#back")["href"].startswith("/ui/answers/default/")


def test_a_refusal_names_what_is_missing_and_the_nearest_records(app, site) -> None:
    page = html(site.get(app.base + ask(app, site, REFUSED)))
    assert page.select_one("article")["data-outcome"] == "refusal"
    # the category in words, its code kept for machines
    assert [(li["data-category"], li.get_text(strip=True)) for li in page.select("#missing li")] == [
        ("rate", "tarif atau persentase")]
    nearest = page.select("#nearest li.nearest")
    assert nearest and all(float(li["data-score"]) >= 0 for li in nearest)
    assert all(a["href"].startswith("/ui/documents/default/") for a in page.select("#nearest a.nearest-link"))


def test_a_reviewer_rejects_a_claim_with_a_reason_and_it_is_kept_and_audited(app, site, answered, served_corpus) -> None:
    from pipeline.audit import verify
    from pipeline.reviews import ReviewStore

    where, _ = answered
    trace_id = where.rsplit("/", 1)[1]
    form = {"collection": "default", "trace_id": trace_id, "claim": "0", "decision": "rejected", "note": "cek ulang"}
    r = site.post(app.base + "/ui/reviews", data=form, allow_redirects=False)  # no reason: asked for one
    assert r.status_code == 303 and "problem=reason_required" in r.headers["location"]
    assert html(site.get(app.base + r.headers["location"])).select_one("#claim-0 .problem") is not None
    r = site.post(app.base + "/ui/reviews", data={**form, "reason": "outdated"}, allow_redirects=False)
    assert r.status_code == 303 and "saved=0" in r.headers["location"]
    page = html(site.get(app.base + r.headers["location"]))
    assert page.select_one("#claim-0 p.reviewed")["data-decision"] == "rejected"
    kept = ReviewStore(served_corpus[0]).for_trace("default", trace_id)[0]
    assert (kept.decision, kept.reason, kept.note, kept.by) == ("rejected", "outdated", "cek ulang",
                                                               f"key:{app.key.split('_')[1]}")
    assert kept.claim_text == page.select_one("#claim-0 .claim-text").get_text(strip=True)
    entries = [json.loads(line) for line in (Path(served_corpus[0]) / "audit.jsonl").read_text().splitlines()]
    assert any(e["event"] == "review" and e["data"].get("trace_id") == trace_id for e in entries)
    assert verify(served_corpus[0]).ok
    # a reason left picked in the form does not stick to an acceptance
    r = site.post(app.base + "/ui/reviews", data={**form, "claim": "1", "decision": "accepted", "reason": "other"},
                  allow_redirects=False)
    assert r.status_code == 303 and "saved=1" in r.headers["location"]
    accepted = ReviewStore(served_corpus[0]).for_trace("default", trace_id)[1]
    assert (accepted.decision, accepted.reason) == ("accepted", None)
    bad = site.post(app.base + "/ui/reviews", data={**form, "claim": "99", "reason": "other"}, allow_redirects=False)
    assert bad.status_code == 422 and html(bad).select_one("#error")["data-type"] == "invalid_request"


def test_what_a_user_typed_is_shown_as_text_never_run(app, site) -> None:
    question = "<script>alert(1)</script> berapa tarif sewa bangunan?"
    page = site.get(app.base + ask(app, site, question)).text
    assert "<script>alert(1)</script>" not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page


def test_the_labels_follow_the_language_toggle(app, site) -> None:
    r = site.get(app.base + "/ui/lang/en?next=/", allow_redirects=False)
    assert r.status_code == 303 and r.headers["location"] == "/"
    page = html(site.get(app.base + "/"))
    assert page.html["lang"] == "en" and page.select_one("#ask-submit").get_text(strip=True) == "Ask"
    site.get(app.base + "/ui/lang/id?next=/")
    assert html(site.get(app.base + "/")).select_one("#ask-submit").get_text(strip=True) == "Tanya"


def test_a_page_that_cannot_be_shown_says_why_with_its_status(app, site) -> None:
    r = site.get(app.base + "/ui/answers/default/" + "0" * 32)
    assert r.status_code == 404 and html(r).select_one("#error")["data-type"] == "not_found"
    r = site.get(app.base + "/ui/documents/default/no-such-doc/text")
    assert r.status_code == 404 and html(r).select_one("#error") is not None
    r = site.get(app.base + "/ui/answers/default/not-a-trace-id")  # the path's own check: a page too
    assert r.status_code == 404 and html(r).select_one("#error")["data-type"] == "invalid_request"
    r = site.get(app.base + "/ui/no-such-page")
    assert r.status_code == 404 and html(r).select_one("#error")["data-type"] == "not_found"
    r = site.post(app.base + "/ui/ask", data={"question": "x" * 5000}, allow_redirects=False)
    assert r.status_code == 422 and html(r).select_one("#ask-problem") is not None


@pytest.mark.parametrize("method, path, data", [
    ("POST", "/ui/reviews", {}),
    ("POST", "/ui/reviews", {"collection": "../etc", "trace_id": "0" * 32, "claim": "0", "decision": "rejected"}),
    ("POST", "/ui/reviews", {"collection": "default", "trace_id": "not-hex", "claim": "0", "decision": "accepted"}),
    ("POST", "/ui/reviews", {"collection": "default", "trace_id": "0" * 32, "claim": "-1", "decision": "flagged"}),
    ("POST", "/ui/ask", {"question": "tarif sewa?", "collection": "../../etc"}),
    ("POST", "/ui/ask", {"question": "   "}),
    ("POST", "/ui/ask", {}),
    ("GET", "/ui/documents/default/pmi-7-2025/text?chunk=nope&quote=%00%ff", None),
    ("GET", "/ui/documents/default/..%2Fkeys.json/original", None),
    ("GET", "/ui/corpus?collection=..%2Fx", None),
    ("GET", "/ui/traces/default/" + "0" * 32, None),
    ("POST", "/ui/traces/default/" + "0" * 32 + "/replay", {}),
    ("GET", "/ui/lang/xx?next=https://evil.example/", None),
])
def test_bad_input_to_a_page_is_a_typed_answer_never_a_500(app, site, method, path, data) -> None:
    r = site.request(method, app.base + path, data=data, allow_redirects=False)
    assert r.status_code < 500, r.text[:300]
    assert r.status_code in (303, 400, 403, 404, 422) or r.status_code == 200, r.status_code
    if r.status_code == 303:  # a redirect stays on this site
        assert r.headers["location"].startswith("/")
    elif r.status_code >= 400:
        assert "Traceback" not in r.text and html(r).select_one("#error, #ask-problem") is not None


def test_a_json_body_where_a_form_is_expected_is_refused_plainly(app, site) -> None:
    r = site.post(app.base + "/ui/ask", json={"question": "tarif sewa?"}, allow_redirects=False)
    assert r.status_code in (400, 422) and "Traceback" not in r.text


# --- first steps: collections described, the real one preselected, examples, the key's own questions ------------


def test_the_ask_page_describes_each_collection_offers_its_examples_and_preselects_real_documents(
        app, site, served_corpus) -> None:
    import shutil

    from pipeline.corpus import DataDir

    root = DataDir(served_corpus[0])
    before = root.about()  # the session's other tests upload real-looking documents into it: set, then restored
    example = "Berapa tarif pajak penghasilan atas persewaan tanah dan bangunan?"
    real = root.collection("peraturan-nyata")  # a collection of real documents beside the sample
    try:
        root.write_about(description="Contoh fiktif untuk mencoba saksi.", examples=[example], illustrative=True)
        page = html(site.get(app.base + "/"))
        assert page.select_one("dt.collection[data-collection='default'] .tag.example") is not None
        real.write_about(description="Peraturan yang sebenarnya.", illustrative=False)
        page = html(site.get(app.base + "/"))
        chosen = page.select_one("select#collection option[selected]")
        assert chosen is not None and chosen["value"] == "peraturan-nyata"  # real documents first
        said = page.select_one("dd[data-collection='default'] .collection-description").get_text(strip=True)
        assert said == "Contoh fiktif untuk mencoba saksi."
        link = page.select_one("dd[data-collection='default'] a.example-question")
        assert link.get_text(strip=True) == example
        # the example opens the form with its question and its collection chosen
        form = html(site.get(app.base + link["href"]))
        assert form.select_one("textarea#question").get_text() == example
        assert form.select_one("select#collection option[selected]")["value"] == "default"
        assert html(site.get(app.base + "/?collection=default")).select_one(
            "select#collection option[selected]")["value"] == "default"  # asked for: kept
    finally:
        shutil.rmtree(real.root, ignore_errors=True)
        root.write_about(**before.model_dump())
    # as before: the first collection of real documents the session's other tests made, else the sample
    expected = next((n for n in root.collections() if not root.collection(n).about().illustrative), "default")
    page = html(site.get(app.base + "/"))
    field = page.select_one("select#collection option[selected]") or page.select_one("input#collection")
    assert field["value"] == expected


def test_the_ask_page_lists_the_keys_own_latest_questions(app, site, served_corpus) -> None:
    from pipeline.keys import KeyStore

    question = "Kapan PMI 7/2025 mulai berlaku?"
    where = ask(app, site, question)
    recent = html(site.get(app.base + "/")).select("#recent li.recent-question")
    assert recent and recent[0].select_one("a").get_text(strip=True) == question
    assert recent[0].select_one("a")["href"] == where
    _, other = KeyStore(served_corpus[0]).create("reader", ["default"], name="another reader")
    theirs = requests.get(app.base + "/", headers={"Authorization": f"Bearer {other}"}, timeout=60)
    assert theirs.status_code == 200 and not html(theirs).select("#recent li")  # another key's questions: not shown


def test_the_page_checks_a_trace_against_the_audit_log_and_never_shows_an_altered_one(app, site, served_corpus) -> None:
    where = ask(app, site, "Berapa lama jangka waktu penyetoran pajak menurut PMI 7/2025?")
    trace_id = where.rsplit("/", 1)[1]
    page = html(site.get(app.base + where))
    assert page.select_one("#trace-check")["data-state"] == "verified"
    assert html(site.get(app.base + f"/ui/traces/default/{trace_id}")).select_one("#trace-check")["data-state"] == \
        "verified"
    path = served_corpus[0] / "traces" / f"{trace_id}.json"
    genuine = path.read_bytes()
    try:
        path.write_bytes(genuine.replace(b'"question": "Berapa lama', b'"question": "Berapa lamanya'))
        assert path.read_bytes() != genuine
        for shown in (where, f"/ui/traces/default/{trace_id}", f"{where}/export.md"):
            r = site.get(app.base + shown)
            assert r.status_code == 409, (shown, r.status_code)
        assert html(site.get(app.base + where)).select_one("#error")["data-type"] == "trace_altered"
    finally:
        path.write_bytes(genuine)
    assert site.get(app.base + where).status_code == 200
    # a trace file the log does not name (copied under a new id) is shown marked as unverifiable
    copy = path.with_name("e" * 32 + ".json")
    copy.write_bytes(genuine.replace(trace_id.encode(), b"e" * 32))
    try:
        page = html(site.get(app.base + "/ui/answers/default/" + "e" * 32))
        assert page.select_one("#trace-check")["data-state"] == "unrecorded"
    finally:
        copy.unlink()


def test_a_review_the_server_cannot_write_is_a_typed_error_page(app, site, answered, served_corpus) -> None:
    where, _ = answered
    trace_id = where.rsplit("/", 1)[1]
    reviews = Path(served_corpus[0]) / "reviews.jsonl"
    aside = reviews.with_name("reviews.jsonl.aside")
    had = reviews.exists()
    if had:
        reviews.rename(aside)
    reviews.mkdir()  # a directory where the reviews file should be
    try:
        r = site.post(app.base + "/ui/reviews", data={"collection": "default", "trace_id": trace_id, "claim": "0",
                                                      "decision": "accepted"}, allow_redirects=False)
        assert r.status_code == 503 and html(r).select_one("#error")["data-type"] == "unavailable"
        assert "Traceback" not in r.text
    finally:
        reviews.rmdir()
        if had:
            aside.rename(reviews)
