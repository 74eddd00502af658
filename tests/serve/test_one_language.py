"""One language per page (issue 26, part 8): every page — sign-in, ask, an answer, each kind of refusal the sample
corpus gives, their traces and replays, the corpus, a document, its text, an error — shown in Indonesian holds no
English word of the label tables, and shown in English no Indonesian one.

The records' own words are what they are: quotes, claims (a record's sentence), the question and its query, and every
element marked with another `lang` (a title, a citation path, a document's text) are left out; so are record names
said inside a sentence (a conflict's sides, the provision that revokes), taken from the API's own answer and trace."""
from __future__ import annotations

import re

import pytest
import requests
from bs4 import BeautifulSoup

from tests.languages import foreign_words

QUESTIONS = {
    "answer": "Berapa tarif pajak penghasilan atas persewaan tanah dan bangunan?",
    "answer in English": "What is the penalty for filing the SPT Masa late?",
    "no claim supported": "Berapa tarif bea masuk untuk impor mobil listrik?",
    "a name no record mentions": "Berapa tarif pajak dividen menurut perjanjian dengan Singapura?",
    "a document not in the corpus": "Apa isi PMK 999/2030 tentang kepabeanan?",
}
RECORD_TEXT = "code, pre, blockquote, .claim-text, .excerpt, .preview, .query-text"


def shown_text(html: str, lang: str) -> str:
    """The page's own words: its main text without the records' words."""
    soup = BeautifulSoup(html, "html.parser")
    main = soup.select_one("main")
    assert main is not None
    for el in main.select(RECORD_TEXT):
        el.decompose()
    for el in main.select("[lang]"):
        if el.get("lang") != lang:
            el.decompose()
    text = " ".join(main.get_text(" ").split())
    return re.sub(r"«[^»]*»", " ", text)  # the question's own terms, quoted


def _names(answer: dict, trace: dict) -> set[str]:
    """Every record name the answer and its trace carry: titles, citation paths and each of their pieces."""
    names: set[str] = set()

    def add(*xs) -> None:
        for x in xs:
            if x:
                names.add(x)
                names.update(p.strip() for p in x.split("›"))
    for c in answer["claims"]:
        for x in c["citations"]:
            add(x.get("path"), x.get("document"))
        if c.get("standing") and c["standing"].get("edge"):
            add(c["standing"]["edge"]["source_path"], c["standing"]["edge"]["target_label"])
    for n in answer.get("nearest") or []:
        add(n.get("path"), n.get("document"), n.get("location"))
    for d in answer.get("documents") or []:
        add(d.get("title"), d.get("cite_as"))
        if d.get("standing") and d["standing"].get("edge"):
            add(d["standing"]["edge"]["source_path"])
    for part in trace["parts"]:
        for a in part["attempts"]:
            for c in a["candidates"]:
                add(c["chunk"]["title"], c["chunk"]["location"], c["chunk"].get("path"))
    return names


@pytest.fixture(scope="module")
def asked(app) -> dict[str, tuple[str, set[str]]]:
    """Each question's trace id and the record names its answer and trace carry."""
    out = {}
    for kind, question in QUESTIONS.items():
        status, answer, _ = app.call("POST", "/v1/answer", {"question": question})
        assert status == 200, answer
        status, trace, _ = app.call("GET", f"/v1/traces/{answer['trace_id']}")
        assert status == 200, trace
        out[kind] = (answer["trace_id"], _names(answer, trace))
    outcomes = {kind: app.call("GET", f"/v1/traces/{tid}")[1]["decision"]["outcome"] for kind, (tid, _) in out.items()}
    assert [k for k, o in outcomes.items() if o == "refusal"] == list(QUESTIONS)[2:], outcomes
    return out


def _get(app, path: str, lang: str, method: str = "GET") -> requests.Response:
    return requests.request(method, app.base + path, headers={"Authorization": f"Bearer {app.key}"},
                            cookies={"saksi_lang": lang}, allow_redirects=False, timeout=120)


def _foreign(html: str, lang: str, names: set[str]) -> list[str]:
    text = shown_text(html, lang)
    for name in sorted({" ".join(n.split()) for n in names}, key=len, reverse=True):  # as the page's text is spaced
        if len(name) > 3:
            text = text.replace(name, " ")
    return foreign_words(text, lang)


@pytest.mark.parametrize("lang", ["id", "en"])
@pytest.mark.parametrize("kind", list(QUESTIONS))
def test_an_answer_or_refusal_its_trace_and_its_replay_are_in_the_pages_language(app, asked, kind, lang) -> None:
    trace_id, names = asked[kind]
    for path, method in ((f"/ui/answers/default/{trace_id}", "GET"), (f"/ui/traces/default/{trace_id}", "GET"),
                         (f"/ui/traces/default/{trace_id}/replay", "POST")):
        r = _get(app, path, lang, method)
        assert r.status_code == 200, (path, r.text[:300])
        assert BeautifulSoup(r.text, "html.parser").html["lang"] == lang
        assert not _foreign(r.text, lang, names), (kind, lang, path, _foreign(r.text, lang, names))


@pytest.mark.parametrize("lang", ["id", "en"])
def test_the_other_pages_and_an_error_are_in_the_pages_language(app, asked, lang) -> None:
    status, corpus, _ = app.call("GET", "/v1/corpus")
    assert status == 200
    names = set().union(*(n for _, n in asked.values()))
    for d in corpus["items"]:
        names.update(x for x in (d.get("title"), d.get("cite_as")) if x)
    doc = next(d["doc_id"] for d in corpus["items"] if d["doc_id"] == "pmi-7-2025")
    pages = {"/": 200, "/ui/signin": 200, "/ui/corpus": 200, f"/ui/documents/default/{doc}": 200,
             f"/ui/documents/default/{doc}/text": 200, "/ui/documents/default/no-such-document": 404,
             "/ui/traces/default/" + "0" * 32: 404}
    for path, code in pages.items():
        r = _get(app, path, lang)
        assert r.status_code == code, (path, r.status_code)
        assert not _foreign(r.text, lang, names), (lang, path, _foreign(r.text, lang, names))
    error = BeautifulSoup(_get(app, "/ui/documents/default/no-such-document", lang).text, "html.parser")
    assert error.select_one("#error p").get_text(strip=True) == {
        "id": "Yang diminta tidak ada di koleksi ini.", "en": "What was asked for is not in this collection."}[lang]
