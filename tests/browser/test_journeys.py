"""The reviewer's journeys through the web page, in headless Debian chromium against a real
`saksi serve` (lite profile, real pipeline; fixtures in conftest.py).

The sample corpus answers ANSWERED with TINGGI claims citing PMI 7/2025 › … › Pasal 3 › ayat (1)
and refuses REFUSED; the two-page PDF (tests/browser/__init__.py) answers PDF_QUESTION from its
second page.
"""
from __future__ import annotations

import json
import os
import re
import shutil

import pytest

from . import ANSWERED, PDF_DOC, PDF_QUESTION, REFUSED, SKIP_ENV, ask, saksi, sign_in

if os.environ.get(SKIP_ENV) == "1":  # before Playwright is imported: skipping needs none of it
    pytest.skip(f"{SKIP_ENV}=1: the browser tests are skipped on request", allow_module_level=True)

from playwright.sync_api import Page, expect  # noqa: E402

pytestmark = pytest.mark.integration

PHONE = {"width": 390, "height": 844}


def norm(text: str) -> str:
    return " ".join(text.split())


def unquoted(text: str) -> str:
    """A quote as the answer page shows it, without its typographic quotation marks."""
    return norm(text).strip("“”\"")


def answer(page: Page):
    return page.locator("article[data-testid=answer]")


def citation_to(page: Page, label_part: str):
    """The first citation of a supported claim whose label names `label_part`; its claim item."""
    item = page.locator("ol#claims > li.claim[data-status=supported]").filter(
        has=page.locator("a.citation", has_text=label_part)).first
    link = item.locator("a.citation", has_text=label_part).first
    expect(link).to_be_visible()
    return link, item


def quote_of(link) -> str:
    """The quote shown under a citation (its blockquote, in the same list item)."""
    return unquoted(link.locator("xpath=ancestor::li[contains(@class,'citation-item')]//blockquote").inner_text())


def no_horizontal_scroll(page: Page) -> bool:
    return page.evaluate("() => document.documentElement.scrollWidth <= window.innerWidth")


def focus_is_visible(page: Page) -> bool:
    """The focused element is not the body, matches :focus-visible and draws an outline."""
    return page.evaluate("""() => { const a = document.activeElement;
        return !!a && a !== document.body && a.matches(':focus-visible')
               && getComputedStyle(a).outlineStyle !== 'none'; }""")


def settled(page: Page) -> None:
    """Wait two frames: a page's `autofocus` is applied at a rendering update after load, so a Tab pressed before it
    can be followed by the field taking the focus, and the next Tab leaving the page."""
    page.evaluate("() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(() => r())))")


def tab_to(page: Page, selector: str, limit: int = 20) -> None:
    """Press Tab until `selector` has the focus, checking at every stop that the focus shows."""
    settled(page)
    for _ in range(limit):
        if page.evaluate("s => document.activeElement && document.activeElement.matches(s)", selector):
            return
        page.keyboard.press("Tab")
        assert focus_is_visible(page), page.evaluate("() => document.activeElement.outerHTML.slice(0, 200)")
    raise AssertionError(f"{selector} not reached with {limit} Tab presses")


# --- 1. ask → answer → a citation → the quoted span, highlighted on its page ---------------------


def open_citation(page: Page, link) -> tuple[str, str, str]:
    """Click a citation; its label, its data-pages and the quote the answer showed under it."""
    label, pages, quote = norm(link.inner_text()), link.get_attribute("data-pages") or "", quote_of(link)
    link.click()
    page.wait_for_url("**/ui/documents/**/text?**")
    return label, pages, quote


def assert_highlighted(page: Page, label: str, quote: str) -> None:
    hl = page.locator("mark#hl")
    expect(hl).to_be_visible()
    expect(hl).to_be_in_viewport()
    expect(page.locator("#quote-not-located")).to_have_count(0)
    assert quote.startswith(norm(hl.inner_text())), (hl.inner_text(), quote)
    assert norm("".join(page.locator("#text mark").all_inner_texts())) == quote  # the whole quote, nothing else
    assert page.evaluate("() => document.activeElement && document.activeElement.id") == "hl"  # keyboard lands there
    path = norm(page.locator("[data-testid=path]").inner_text())
    assert label == path or re.fullmatch(re.escape(path) + r", (pp?|hlm)\. \d+(–\d+)?", label), (label, path)


def test_a_citation_opens_the_source_with_the_quote_highlighted(page: Page, site) -> None:
    sign_in(page, site)
    ask(page, site, ANSWERED)
    expect(answer(page)).to_have_attribute("data-outcome", "answer")
    link, claim = citation_to(page, "Pasal 3 › ayat (1)")
    assert "PMI 7/2025" in link.inner_text()
    band = claim.get_attribute("data-band")  # which band is the reader's calibration (docs/evaluation.md)
    assert band in {"TINGGI", "SEDANG", "RENDAH"}
    expect(claim).to_contain_text(band)  # and the claim says it
    label, pages, quote = open_citation(page, link)
    assert_highlighted(page, label, quote)
    assert pages == ""  # a Markdown rule has no pages: none are claimed
    expect(page.locator("[data-testid=quote-pages]")).to_have_count(0)
    assert set(page.locator("#text mark").evaluate_all("ms => ms.map(m => m.dataset.page)")) == {""}
    expect(page.locator("a#download")).to_be_visible()
    expect(page.locator("a#back")).to_have_attribute("href", re.compile(r"^/ui/answers/default/[0-9a-f]{32}$"))


def test_the_revoked_rate_is_shown_as_history_with_the_provision_that_revoked_it(page: Page, site) -> None:
    sign_in(page, site)
    ask(page, site, ANSWERED)
    expect(page.locator("#as-of")).to_have_attribute("data-source", "today")
    claims = page.locator("ol#claims > li.claim[data-status=supported]")
    first = claims.first
    expect(first).to_contain_text("10%")
    expect(first.locator(".standing")).to_have_attribute("data-standing", "in_force")
    old = claims.filter(has_text="15%").first
    expect(old.locator(".standing")).to_have_attribute("data-standing", "ended")
    expect(old.locator(".standing")).to_contain_text("PMI 7/2025")  # the revoking provision, with its words
    expect(old.locator(".standing")).to_contain_text("dicabut dan dinyatakan tidak berlaku")
    assert old.get_attribute("data-band") != "TINGGI"
    expect(page.locator("#conflicts .conflict[data-applies]")).to_have_count(1)
    line = page.locator("#direct-answer")  # the direct answer: the rate in force first, the revoked one as history
    assert norm(line.inner_text()).split(": ", 1)[1].startswith("10% [1]")
    expect(line).to_contain_text("15% [2]")
    card = old.locator(".doc-card").first  # the receipt says what the document is and that it was revoked
    expect(card).to_have_attribute("data-standing", "ended")
    expect(card).to_contain_text("Nomor 3 Tahun 2022")
    expect(card).to_contain_text("2022-07-01")
    marker = line.locator("a.marker", has_text="[2]")
    preview = page.locator("#" + marker.get_attribute("aria-describedby"))
    expect(preview).to_be_hidden()
    marker.focus()  # focusing a marker previews the quote it cites
    expect(preview).to_be_visible()
    expect(preview).to_contain_text("15% (lima belas persen)")
    marker.click()
    assert page.evaluate("() => location.hash") == f"#claim-{old.get_attribute('data-claim-index')}"


def test_the_answer_downloads_for_a_working_paper_as_markdown_and_docx(page: Page, site, tmp_path) -> None:
    sign_in(page, site)
    trace_id = ask(page, site, ANSWERED)
    with page.expect_download() as got:
        page.click("a#export-md")
    md = tmp_path / "a.md"
    got.value.save_as(md)
    text = md.read_text(encoding="utf-8")
    assert trace_id in text and "10%" in text and "PMI 7/2025" in text and "SHA-256" in text
    with page.expect_download() as got:
        page.click("a#export-docx")
    docx_file = tmp_path / "a.docx"
    got.value.save_as(docx_file)
    from docx import Document as Docx
    paragraphs = [p.text for p in Docx(str(docx_file)).paragraphs]
    assert any(trace_id in p for p in paragraphs) and any("riwayat: dicabut" in p for p in paragraphs)


def test_a_citation_into_a_pdf_highlights_the_quote_on_its_page(page: Page, site) -> None:
    sign_in(page, site)
    ask(page, site, PDF_QUESTION)
    expect(answer(page)).to_have_attribute("data-outcome", "answer")
    link, _ = citation_to(page, "Pasal 2 › ayat (1)")
    assert "PMK 88/2024" in link.inner_text() and link.get_attribute("data-pages") == "2-2"
    label, _, quote = open_citation(page, link)
    assert "Rp15.000" in quote
    assert_highlighted(page, label, quote)
    shown = page.locator("[data-testid=quote-pages]")
    expect(shown).to_have_attribute("data-first", "2")
    expect(shown).to_have_attribute("data-last", "2")
    assert set(page.locator("#text mark").evaluate_all("ms => ms.map(m => m.dataset.page)")) == {"2"}
    original = page.request.get(site.url + page.locator("a#download").get_attribute("href"))
    assert original.status == 200 and original.body().startswith(b"%PDF"), original.status
    assert PDF_DOC in (original.headers.get("content-disposition") or "")
    # the highlight sits after the separator where page 2 begins
    separators = page.locator("span.page-break").evaluate_all("s => s.map(e => e.dataset.page)")
    assert page.evaluate("""() => { const sep = document.querySelector('span.page-break[data-page="2"]');
        return !!sep && !!(sep.compareDocumentPosition(document.getElementById('hl'))
                           & Node.DOCUMENT_POSITION_FOLLOWING); }"""), \
        f"no page-2 separator before the highlight (separators: {separators})"


# --- 2. ask → refusal → the nearest records, with their scores ----------------------------------


def test_a_refusal_shows_what_is_missing_and_the_nearest_records_with_scores(page: Page, site) -> None:
    sign_in(page, site)
    ask(page, site, REFUSED)
    expect(answer(page)).to_have_attribute("data-outcome", "refusal")
    expect(page.locator("#refusal")).to_be_visible()
    reason = norm(page.locator("#refusal-reason").inner_text())
    # the things the question names that no record mentions are said, and what is missing is said in words
    assert "Tidak ada dokumen dalam koleksi ini yang menyebut" in reason and "«mobil»" in reason, reason
    missing = page.locator("#missing li").first
    expect(missing).to_have_attribute("data-category", "rate")
    expect(missing).to_have_text("tarif atau persentase")
    expect(page.locator("ol#claims")).to_have_count(0)
    nearest = page.locator("ol#nearest > li.nearest")
    expect(nearest.first).to_be_visible()
    assert nearest.count() >= 1
    paths = [norm(a.inner_text()) for a in page.locator("ol#nearest a.nearest-link").all()]
    assert len({p.split(" › ")[0] for p in paths}) == len(paths), paths  # one record per document
    for item in nearest.all():
        score = float(item.get_attribute("data-score"))
        assert 0 < score <= 1.5, score
        shown = item.locator(".score").inner_text()
        assert f"{score:.3f}" in shown, (score, shown)
        assert norm(item.locator("a.nearest-link").inner_text())  # where the record stands


# --- 3. reject a claim → `saksi reviews export` has it → `saksi eval --reviews` flags it ----------


def test_a_rejected_claim_is_exported_and_flagged_by_eval_reviews(page: Page, site, tmp_path) -> None:
    sign_in(page, site)
    trace_id = ask(page, site, ANSWERED)
    link, claim = citation_to(page, "PMI 7/2025")
    index = int(claim.get_attribute("data-claim-index"))
    note = "browser journey: the reviewer rejects this claim"
    form = claim.locator("form.review-form")
    form.locator("select[name=reason]").select_option("not_supported")
    form.locator("input[name=note]").fill(note)
    form.locator("button[name=decision][value=rejected]").click()
    page.wait_for_url(re.compile(r"[?&]saved="))
    reviewed = page.locator(f"ol#claims > li.claim[data-claim-index='{index}'] p.reviewed")
    expect(reviewed).to_have_attribute("data-decision", "rejected")
    expect(reviewed).to_contain_text(note)

    export = saksi("reviews", "export", "--format", "jsonl", "--data-dir", str(site.data_dir))
    rows = [json.loads(line) for line in export.stdout.splitlines() if line.strip()]
    mine = [r for r in rows if r["trace_id"] == trace_id and r["claim"] == index]
    assert len(mine) == 1, rows
    r = mine[0]
    assert (r["decision"], r["reason"], r["note"], r["collection"]) == ("rejected", "not_supported", note, "default")
    assert r["by"] == f"key:{site.reader.split('_')[1]}"

    # Milvus Lite lets one process open its file, and the running server holds it: `eval --reviews`
    # replays over a copy of the data directory taken now (reviews, traces and indexes as served)
    snapshot = tmp_path / "data"
    shutil.copytree(site.data_dir, snapshot)
    done = saksi("eval", "--reviews", "--data-dir", str(snapshot), check=False)
    out = done.stdout + done.stderr
    assert done.returncode == 1, out
    still = [line for line in out.splitlines() if "STILL SHOWN" in line]
    assert any(trace_id[:8] in line and f"claim {index} " in line for line in still), out


# --- 4. the trace page: both lanes' candidates ---------------------------------------------------


def test_the_trace_page_lists_both_lanes_candidates(page: Page, site) -> None:
    sign_in(page, site)
    trace_id = ask(page, site, ANSWERED)
    page.locator("a#trace-link").click()
    page.wait_for_url(f"**/ui/traces/default/{trace_id}")
    for lane in ("dense", "lexical"):
        rows = page.locator(f"table.lane[data-lane={lane}] tr.candidate")
        expect(rows.first).to_be_visible()
        assert rows.count() >= 1, lane


def test_replaying_a_trace_in_the_page_reaches_the_same_decision(page: Page, site) -> None:
    sign_in(page, site)
    trace_id = ask(page, site, ANSWERED)
    page.goto(f"{site.url}/ui/traces/default/{trace_id}")
    page.locator("#replay [type=submit]").click()
    expect(page.locator("#replay-result")).to_have_attribute("data-same", "true", timeout=60_000)


# --- 5. keyboard only ----------------------------------------------------------------------------


def test_a_keyboard_only_pass_signs_in_asks_and_lands_on_the_answer(page: Page, site) -> None:
    shown = page.goto(f"{site.url}/")
    page.wait_for_url("**/ui/signin**")  # no key yet: the sign-in form
    assert shown is not None and shown.ok, f"the sign-in form answered {shown and shown.status}"
    # from here on, only the keyboard; the key field has the focus on arrival
    expect(page.locator("#key")).to_be_focused()
    tab_to(page, "#key")
    assert focus_is_visible(page)
    page.keyboard.type(site.reader)
    page.keyboard.press("Enter")
    page.wait_for_url(f"{site.url}/")
    tab_to(page, "#question")
    assert focus_is_visible(page)
    page.keyboard.type(ANSWERED)
    tab_to(page, "#ask-submit")
    page.keyboard.press("Enter")
    page.wait_for_url("**/ui/answers/**", timeout=120_000)
    expect(answer(page)).to_have_attribute("data-outcome", "answer")
    assert norm(page.locator("p.question").inner_text()).endswith(ANSWERED)
    # the skip link is the first Tab stop, shows when focused, and jumps to the content
    page.keyboard.press("Tab")
    assert page.evaluate("() => document.activeElement.matches('a.skip')")
    assert focus_is_visible(page)
    expect(page.locator("a.skip")).to_be_in_viewport()
    page.keyboard.press("Enter")
    assert page.evaluate("() => document.activeElement && document.activeElement.id") == "main"
    # a claim's breakdown opens from the keyboard too
    tab_to(page, "ol#claims details.breakdown > summary")
    page.keyboard.press("Enter")
    expect(page.locator("ol#claims details.breakdown[open] dd[data-part=judge]").first).to_be_visible()


# --- labels, phone width, the corpus ------------------------------------------------------------


def test_the_language_toggle_switches_the_labels(page: Page, site) -> None:
    sign_in(page, site)
    expect(page.locator("html")).to_have_attribute("lang", "id")
    expect(page.locator("#ask-submit")).to_have_text("Tanya")
    page.locator("#lang-toggle").click()
    page.wait_for_load_state()
    expect(page.locator("html")).to_have_attribute("lang", "en")
    expect(page.locator("#ask-submit")).to_have_text("Ask")
    ask(page, site, ANSWERED)
    here = page.url
    expect(page.locator("h1")).to_have_text("Answer")
    expect(page.locator("#lang-toggle")).to_have_text("Bahasa Indonesia")
    page.locator("#lang-toggle").click()
    page.wait_for_url(here)  # the toggle comes back to the same page
    expect(page.locator("html")).to_have_attribute("lang", "id")
    expect(page.locator("h1")).to_have_text("Jawaban")
    expect(page.locator("#lang-toggle")).to_have_text("English")


def test_the_answer_and_evidence_pages_fit_a_phone_width(browser, site) -> None:
    context = browser.new_context(viewport=PHONE, device_scale_factor=1, is_mobile=True, has_touch=True)
    try:
        page = context.new_page()
        sign_in(page, site)
        for question, label in ((ANSWERED, "Pasal 3 › ayat (1)"), (PDF_QUESTION, "Pasal 2 › ayat (1)")):
            ask(page, site, question)
            page.locator("ol#claims details.breakdown").first.locator("summary").click()
            assert no_horizontal_scroll(page), ("answer", question, page.evaluate(
                "() => [document.documentElement.scrollWidth, window.innerWidth]"))
            link, _ = citation_to(page, label)
            link.click()
            page.wait_for_url("**/ui/documents/**/text?**")
            expect(page.locator("mark#hl")).to_be_in_viewport()
            assert no_horizontal_scroll(page), ("evidence", question, page.evaluate(
                "() => [document.documentElement.scrollWidth, window.innerWidth]"))
        ask(page, site, REFUSED)
        assert no_horizontal_scroll(page), "refusal"
    finally:
        context.close()


def test_the_corpus_lists_the_documents_and_only_a_curator_may_upload(page: Page, site) -> None:
    sign_in(page, site)
    page.goto(f"{site.url}/ui/corpus")
    rows = page.locator("table#documents tr.document")
    expect(rows.first).to_be_visible()
    assert rows.count() == 5  # the sample corpus's four documents and the PDF
    expect(page.locator("form#upload")).to_have_count(0)  # a reader's key
    page.goto(f"{site.url}/ui/documents/default/{PDF_DOC}")
    expect(page.locator("#outline")).to_be_visible()
    expect(page.locator("#outline")).to_contain_text("Pasal 2")
    page.locator("button#signout").click()
    page.wait_for_url("**/ui/signin**")
    page.goto(f"{site.url}/ui/corpus")
    page.wait_for_url("**/ui/signin**")  # signed out: the page asks for a key again
    sign_in(page, site, site.curator)
    page.goto(f"{site.url}/ui/corpus")
    expect(page.locator("form#upload")).to_be_visible()


# what the page shows in its own words: the records' words (quotes, claims, excerpts, code, and whatever is marked
# with another language) taken out of a copy of <main>, as the served test does (tests/serve/test_one_language.py)
OWN_WORDS = """(lang) => {
  const main = document.querySelector('main').cloneNode(true);
  main.querySelectorAll('code, pre, blockquote, .claim-text, .excerpt, .preview, .query-text').forEach(e => e.remove());
  main.querySelectorAll('[lang]').forEach(e => { if (e.getAttribute('lang') !== lang) e.remove(); });
  return main.innerText;
}"""


def test_an_indonesian_answer_and_refusal_show_no_english_words_in_the_browser(page: Page, site) -> None:
    from tests.languages import foreign_words

    sign_in(page, site)
    page.goto(f"{site.url}/ui/lang/id?next=/")
    for question in (ANSWERED, REFUSED):
        ask(page, site, question)
        assert page.locator("html").get_attribute("lang") == "id"
        shown = re.sub(r"«[^»]*»", " ", page.evaluate(OWN_WORDS, "id"))
        assert not foreign_words(shown, "id"), (question, foreign_words(shown, "id"))


# --- claims shown as they pass their checks (issue 29) ----------------------------------------------------------


def test_claims_appear_on_the_ask_page_as_they_pass_their_checks_then_the_whole_answer(page: Page, site) -> None:
    """With script, the ask page shows each claim once nothing can withhold it (POST /ui/ask/stream), then opens the
    whole answer's page. What the ask page showed is recorded as it appears (a MutationObserver writing to
    sessionStorage, which outlives the navigation) and read back on the answer's page."""
    sign_in(page, site)
    page.goto(f"{site.url}/")
    page.evaluate("""() => {
        sessionStorage.setItem('live', '[]');
        new MutationObserver(() => {
            const claims = [...document.querySelectorAll('#live-claims > li.claim.live')].map(li => ({
                text: li.querySelector('p.claim-text').textContent,
                quotes: [...li.querySelectorAll('blockquote')].map(b => b.textContent),
                shown: !document.getElementById('live').hidden}));
            sessionStorage.setItem('live', JSON.stringify(claims));
        }).observe(document.getElementById('live-claims'), {childList: true});
    }""")
    page.fill("#question", ANSWERED)
    page.click("#ask-submit")
    page.wait_for_url("**/ui/answers/**", timeout=120_000)
    live = json.loads(page.evaluate("() => sessionStorage.getItem('live')"))
    assert live and all(c["shown"] for c in live)
    supported = page.locator("ol#claims > li.claim[data-status=supported]")
    assert [norm(c["text"]) for c in live] == [norm(t) for t in supported.locator("p.claim-text").all_inner_texts()]
    whole_quotes = [unquoted(t) for t in supported.locator("blockquote").all_inner_texts()]
    assert [unquoted(q) for c in live for q in c["quotes"]] == whole_quotes  # the same receipts, in order


def test_without_script_the_ask_form_is_answered_as_a_page(browser, site) -> None:
    ctx = browser.new_context(java_script_enabled=False, locale="id-ID")
    try:
        page = ctx.new_page()
        page.goto(f"{site.url}/ui/signin")
        page.fill("#key", site.reader)
        page.click("#signin-submit")
        page.wait_for_url(f"{site.url}/")
        page.fill("#question", ANSWERED)
        page.click("#ask-submit")
        page.wait_for_url("**/ui/answers/**", timeout=120_000)
        expect(page.locator("ol#claims > li.claim[data-status=supported]").first).to_be_visible()
        expect(page.locator("#live")).to_have_count(0)  # the answer's page, not the ask page's live list
    finally:
        ctx.close()
