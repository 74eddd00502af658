"""The evaluation report page: self-contained, escaped, balanced, and robust to missing sections."""
from __future__ import annotations

import copy
import re
from html.parser import HTMLParser

import pytest

from pipeline.eval.html import render_html

VOID = {"meta", "br", "hr", "img", "input", "link", "col", "area", "base", "wbr", "source", "track", "embed", "param"}


def _report() -> dict:
    return {
        "dataset": {"name": "tydiqa-id-mini", "path": "data/eval/tydiqa.jsonl", "format": "tydiqa",
                    "passages": 40, "questions": 3, "answerable": 2, "unanswerable": 1},
        "profile": "lite",
        "corpus": {"data_dir": "/tmp/idx", "documents": 40, "chunks": 132},
        "created_at": "2025-01-02T03:04:05Z",
        "saksi_version": "0.1.0",
        "limit": None,
        "metrics": {
            "questions": 3, "answerable": 2, "unanswerable": 1,
            "attributed_accuracy": 0.5, "answered_answerable_rate": 1.0, "abstention_recall": 1.0,
            "abstention_precision": 1.0, "overall_accuracy": 0.6667, "quote_exactness": 1.0, "quotes_checked": 2,
            "numbers_without_basis_displayed": 0, "claims_displayed_supported": 2, "claims_demoted": 1,
            "demotion_reasons": {"number_without_basis": 1}, "corrective_retries": 1, "answered_after_retry": 0,
            "refusal_reasons": {"no_supported_claim": 1},
            "retrieval_recall": {"basis": "gold passage", "at": {"1": 0.5, "6": 1.0, "30": None}},
            "latency_ms": {"p50": 120.0, "p95": 300.5, "mean": 150.2},
        },
        "ungated": {"attributed_accuracy": 0.5, "abstention_recall": 0.0},
        "comparison": [
            {"metric": "attributed_accuracy", "label": "Attributed accuracy", "gated": 0.5, "ungated": 0.5,
             "better": "higher"},
            {"metric": "abstention_recall", "label": "Abstention recall", "gated": 1.0, "ungated": 0.0,
             "better": "higher"},
            {"metric": "answered_unanswerable_rate", "label": "Answered unanswerable", "gated": 0.0,
             "ungated": 1.0, "better": "lower"},
            {"metric": "numbers_without_basis_displayed", "label": "Numbers without basis shown", "gated": 0,
             "ungated": 2, "better": "lower"},
            {"metric": "quote_exactness", "label": "Quote exactness", "gated": 1.0, "ungated": None,
             "better": "higher"},
        ],
        "calibration": {
            "bands": [{"band": "TINGGI", "answered": 1, "correct": 1, "accuracy": 1.0},
                      {"band": "SEDANG", "answered": 1, "correct": 0, "accuracy": 0.0},
                      {"band": "RENDAH", "answered": 0, "correct": 0, "accuracy": None}],
            "bins": [{"lo": 0.0, "hi": 0.5, "n": 0, "mean_confidence": None, "accuracy": None},
                     {"lo": 0.5, "hi": 0.8, "n": 1, "mean_confidence": 0.62, "accuracy": 0.0},
                     {"lo": 0.8, "hi": 1.0, "n": 1, "mean_confidence": 0.91, "accuracy": 1.0}],
        },
        "tradeoff": [
            {"threshold": 0.3, "answered_rate": 1.0, "attributed_accuracy": 0.5, "abstention_recall": 0.0,
             "answered_unanswerable_rate": 1.0, "precision": None},
            {"threshold": 0.5, "answered_rate": 0.67, "attributed_accuracy": 0.5, "abstention_recall": 1.0,
             "answered_unanswerable_rate": 0.0, "precision": 0.5},
            {"threshold": 0.7, "answered_rate": 0.33, "attributed_accuracy": 0.5, "abstention_recall": 1.0,
             "answered_unanswerable_rate": 0.0, "precision": 0.5},
        ],
        "operating_point": 0.5,
        "truthfulness": {
            "score": -0.1429, "questions": 7, "correct_answers": 2, "wrong_answers": 3, "answered_unanswerable": 1,
            "refusals": 2, "answer_precision": 0.4,
            "refusal": {"precision": 0.5, "recall": 0.5, "f1": 0.5},
            "claims": {"shown": 6, "correct": 2, "precision": 0.3333},
            "bands": [{"band": "TINGGI", "claims": 4, "correct": 2, "precision": 0.5},
                      {"band": "SEDANG", "claims": 2, "correct": 0, "precision": 0.0},
                      {"band": "RENDAH", "claims": 0, "correct": 0, "precision": None}],
            "ece": {"bins": 10, "claims": 0.4217, "answers": 0.384},
        },
        "risk_coverage": [
            {"threshold": 0.95, "answered": 1, "correct": 1, "wrong": 0, "coverage": 0.1429, "precision": 1.0,
             "truthfulness": 0.1429},
            {"threshold": 0.85, "answered": 3, "correct": 2, "wrong": 1, "coverage": 0.4286, "precision": 0.6667,
             "truthfulness": 0.1429},
            {"threshold": 0.62, "answered": 5, "correct": 2, "wrong": 3, "coverage": 0.7143, "precision": 0.4,
             "truthfulness": -0.1429},
        ],
        "reliability": {
            "claims": [{"lo": 0.6, "hi": 0.7, "n": 2, "mean_confidence": 0.63, "accuracy": 0.0},
                       {"lo": 0.8, "hi": 0.9, "n": 1, "mean_confidence": 0.85, "accuracy": 0.0},
                       {"lo": 0.9, "hi": 1.0, "n": 3, "mean_confidence": 0.93, "accuracy": 0.6667}],
            "answers": [],
        },
    }


def _rows() -> list[dict]:
    return [
        {"id": "q1", "question": "Berapa tarif PPh <script>alert(1)</script>?", "answerable": True,
         "golds": ["5%", "lima persen", "ignored third"], "outcome": "answer", "correct": True, "band": "TINGGI",
         "confidence": 0.91, "reason_code": None, "quote": 'tarif 5% & "final" ' + "x" * 300, "gold_rank": 1,
         "latency_ms": 120.0, "trace": "traces/q1 a&b.json",
         "ungated": {"answered": True, "correct": True, "claims": 1, "unsupported": 0}},
        {"id": "q2", "question": "Siapa presiden?", "answerable": True, "golds": ["Sukarno"], "outcome": "answer",
         "correct": False, "band": "SEDANG", "confidence": 0.62, "reason_code": None, "quote": "Hatta",
         "gold_rank": None, "latency_ms": 300.5, "trace": None,
         "ungated": {"answered": True, "correct": False, "claims": 2, "unsupported": 1}},
        {"id": "q3", "question": "Apa warna langit di Mars?", "answerable": False, "golds": [], "outcome": "refusal",
         "correct": True, "band": None, "confidence": None, "reason_code": "no_supported_claim", "quote": None,
         "gold_rank": None, "latency_ms": 30.0, "trace": "traces/q3.json",
         "ungated": {"answered": True, "correct": False, "claims": 1, "unsupported": 1}},
    ]


class _Balance(HTMLParser):
    """Tracks open tags; records mismatches and counts of svg/table starts and ends."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.stack: list[str] = []
        self.errors: list[str] = []
        self.counts: dict[str, int] = {}

    def handle_starttag(self, tag, attrs):
        self.counts[f"<{tag}"] = self.counts.get(f"<{tag}", 0) + 1
        if tag not in VOID:
            self.stack.append(tag)

    def handle_endtag(self, tag):
        self.counts[f"</{tag}"] = self.counts.get(f"</{tag}", 0) + 1
        if not self.stack or self.stack[-1] != tag:
            self.errors.append(f"unexpected </{tag}> with stack {self.stack[-3:]}")
            return
        self.stack.pop()


def _section(page: str, heading: str) -> str:
    start = page.index(f"<h2>{heading}")
    nxt = page.find("<h2>", start + 4)
    return page[start:nxt if nxt != -1 else len(page)]


@pytest.mark.unit
def test_page_is_self_contained():
    page = render_html(_report(), _rows())
    assert page.startswith("<!DOCTYPE html>")
    assert "src=" not in page
    assert 'href="http' not in page and "href='http" not in page
    assert "<link" not in page
    assert "@import" not in page and "url(" not in page


@pytest.mark.unit
def test_text_is_escaped():
    page = render_html(_report(), _rows())
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "<script>alert(1)" not in page
    assert "tarif 5% &amp; &quot;final&quot;" in page
    assert 'tarif 5% & "final"' not in page


@pytest.mark.unit
def test_title_meta_and_trace_link():
    page = render_html(_report(), _rows())
    assert "<title>saksi evaluation — tydiqa-id-mini</title>" in page
    assert "data/eval/tydiqa.jsonl" in page and "0.1.0" in page
    assert '<a href="traces/q1 a&amp;b.json">trace</a>' in page
    assert '<a href="traces/q3.json">trace</a>' in page
    assert page.count(">trace</a>") == 2


@pytest.mark.unit
def test_each_chart_section_has_svg():
    page = render_html(_report(), _rows())
    for heading in ("What the contract buys", "Calibration", "Threshold trade-off", "Reasons"):
        assert "<svg" in _section(page, heading), heading
    assert _section(page, "Calibration").count("<svg") == 2
    assert 'stroke-dasharray' in _section(page, "Calibration")        # the y=x diagonal
    assert "operating point 0.50" in _section(page, "Threshold trade-off")


@pytest.mark.unit
def test_numbers_formatting_and_table_content():
    page = render_html(_report(), _rows())
    assert "66.7%" in page and "50.0%" in page
    assert "5% | lima persen" in page and "ignored third" not in page
    assert "x" * 200 not in page and "…" in page
    qtable = page[page.index('<table id="qtable"'):]
    assert qtable.count("<tr class=") == 3
    assert 'class="ok"' in qtable and 'class="bad"' in qtable and 'class="okref"' in qtable
    assert "recall@30" in page


@pytest.mark.unit
def test_comparison_highlights_better_side():
    page = _section(render_html(_report(), _rows()), "What the contract buys")
    row = re.search(r"<tr><td>Answered unanswerable</td>(.*?)</tr>", page).group(1)
    assert row.startswith('<td class="n win">0.0%')
    row = re.search(r"<tr><td>Attributed accuracy</td>(.*?)</tr>", page).group(1)
    assert "win" not in row
    row = re.search(r"<tr><td>Numbers without basis shown</td>(.*?)</tr>", page).group(1)
    assert '<td class="n win">0</td><td class="n">2</td>' in row


@pytest.mark.unit
def test_contract_check_pass_and_fail():
    assert '"pass">PASS' in render_html(_report(), _rows())
    failing = _report()
    failing["metrics"]["numbers_without_basis_displayed"] = 1
    page = render_html(failing, _rows())
    assert '"fail">FAIL' in page and '"pass">PASS' not in page
    nothing_shown = _report()
    nothing_shown["metrics"]["quote_exactness"] = None
    assert '"pass">PASS' in render_html(nothing_shown, _rows())


@pytest.mark.unit
def test_tags_balance():
    parser = _Balance()
    parser.feed(render_html(_report(), _rows()))
    parser.close()
    assert parser.errors == []
    assert parser.stack == []
    for tag in ("svg", "table"):
        assert parser.counts.get(f"<{tag}", 0) == parser.counts.get(f"</{tag}", 0) > 0


@pytest.mark.unit
def test_degraded_inputs_do_not_raise():
    report = _report()
    report["tradeoff"] = []
    del report["calibration"]
    report["metrics"]["refusal_reasons"] = {}
    page = render_html(report, [])
    assert page.startswith("<!DOCTYPE html>")
    assert "No trade-off sweep" in page and "No calibration data" in page and "none" in page
    parser = _Balance()
    parser.feed(page)
    assert parser.errors == [] and parser.stack == []


@pytest.mark.unit
def test_empty_report_renders_dashes():
    page = render_html({}, [])
    assert "saksi evaluation — –" in page
    assert '"fail">FAIL' in page
    sparse = copy.deepcopy(_report())
    sparse["metrics"] = {"retrieval_recall": {"at": {"1": None}}}
    sparse["comparison"] = [{"metric": "x"}]
    sparse["calibration"] = {"bands": "bad", "bins": [{}]}
    sparse["tradeoff"] = [{"threshold": 0.5}]
    sparse["operating_point"] = None
    page = render_html(sparse, [{"id": "only"}])
    assert "–" in page and "only" in page


TRUTH = "Truthfulness"


@pytest.mark.unit
def test_truthfulness_section_cards_and_band_table():
    page = _section(render_html(_report(), _rows()), TRUTH)
    assert "-0.143" in page and "2 / 3 / 2" in page                     # score; correct / wrong / refused
    assert "40.0%" in page and "50.0% / 50.0% / 50.0%" in page             # answer precision; refusal P / R / F1
    assert "33.3% of 6" in page and "0.422 / 0.384" in page and "(10 bins)" in page   # claims; ECE
    band = re.search(r"<tr><td>TINGGI</td>(.*?)</tr>", page).group(1)
    # claim level (4 shown, 2 right, 50%) beside the answer-level table (1 answered, 100%)
    assert band == ('<td class="n">4</td><td class="n">2</td><td class="n">50.0%</td>'
                    '<td class="n">1</td><td class="n">100.0%</td>')
    assert re.search(r"<tr><td>RENDAH</td>.*?–", page)


@pytest.mark.unit
def test_truthfulness_section_has_risk_coverage_and_reliability_charts():
    page = _section(render_html(_report(), _rows()), TRUTH)
    assert page.count("<svg") == 2
    assert 'aria-label="Risk–coverage curve"' in page and "as run: threshold 0.62" in page
    assert "answer precision" in page and "coverage (share of all questions answered)" in page
    rel = page[page.index('aria-label="Reliability of shown claims"'):]
    assert "stroke-dasharray" in rel                                      # the y=x diagonal
    assert rel.count("<circle") == 3 and "n=3" in rel and "<title>n=3</title></rect>" in rel  # points and counts


@pytest.mark.unit
def test_truthfulness_section_degrades():
    report = _report()
    report["risk_coverage"] = []
    report["reliability"] = {"claims": "bad"}
    report["truthfulness"]["refusal"] = "bad"
    report["truthfulness"]["bands"] = None
    page = render_html(report, _rows())
    section = _section(page, TRUTH)
    assert "No answered question" in section and "No claims shown" in section and "No bands" in section
    assert "– / – / –" in section
    del report["truthfulness"]
    assert "No truthfulness data" in _section(render_html(report, _rows()), TRUTH)
    parser = _Balance()
    parser.feed(page)
    assert parser.errors == [] and parser.stack == []


RECEIPTS = {
    "questions": 4, "answered": 3, "answered_rate": 0.75,
    "levels": {"law": {"questions": 4, "answered": 3, "top": {"hits": 3, "precision": 1.0, "recall": 0.75},
                       "any": {"hits": 3, "precision": 1.0, "recall": 0.75}},
               "pasal": {"questions": 4, "answered": 3, "top": {"hits": 2, "precision": 0.6667, "recall": 0.5},
                         "any": {"hits": 3, "precision": 1.0, "recall": 0.75}},
               "ayat": {"questions": 2, "answered": 1, "top": {"hits": 0, "precision": 0.0, "recall": 0.0},
                        "any": {"hits": 0, "precision": 0.0, "recall": 0.0}},
               "huruf": {"questions": 0, "answered": 0, "top": {"hits": 0, "precision": None, "recall": None},
                         "any": {"hits": 0, "precision": None, "recall": None}}},
    "pasal_by_band": [{"band": "TINGGI", "answered": 1, "pasal_hits": 1, "precision": 1.0},
                      {"band": "SEDANG", "answered": 2, "pasal_hits": 1, "precision": 0.5, "mean_confidence": 0.7},
                      {"band": "RENDAH", "answered": 0, "pasal_hits": 0, "precision": None}],
    "span": {"questions": 3, "answered": 2, "hits": 1, "rate": 0.3333, "precision": 0.5},
    "curve": [{"threshold": 0.9, "answered": 1, "answered_rate": 0.25, "pasal_hits": 1, "pasal_precision": 1.0},
              {"threshold": 0.61, "answered": 3, "answered_rate": 0.75, "pasal_hits": 2, "pasal_precision": 0.6667}],
}
RECEIPT_ROW = {"reference": {"law": "PP 34/2021", "pasal": ["12"], "ayat": "2", "huruf": "h"},
               "top": {"band": "SEDANG", "confidence": 0.62, "law": True, "pasal": True, "ayat": False, "huruf": False,
                       "cites": [{"law": "PP 34/2021", "pasal": "12", "ayat": "3", "huruf": None, "angka": None}]},
               "any": {"law": True, "pasal": True, "ayat": False, "huruf": False}, "laws": ["PP 34/2021"],
               "span_answer": True, "span_hit": False}


@pytest.mark.unit
def test_receipts_section_tables_and_curve():
    report = _report()
    report["receipts"] = RECEIPTS
    rows = _rows()
    rows[1]["receipt"] = RECEIPT_ROW
    page = render_html(report, rows)
    section = _section(page, "Receipts")
    pasal = re.search(r"<tr><td>Pasal \(law and Pasal\)</td>(.*?)</tr>", section).group(1)
    assert pasal == ('<td class="n">4</td><td class="n">3</td><td class="n">2</td><td class="n">66.7%</td>'
                     '<td class="n">50.0%</td><td class="n">3</td><td class="n">100.0%</td><td class="n">75.0%</td>')
    band = re.search(r"<tr><td>SEDANG</td>(.*?)</tr>", section).group(1)
    assert band == '<td class="n">2</td><td class="n">1</td><td class="n">50.0%</td><td class="n">70.0%</td>'
    assert "1 (33.3%)" in section and "50.0% of 2" in section              # span hits; of answered span questions
    assert section.count("<svg") == 1 and 'aria-label="Pasal precision vs answered"' in section
    assert "as run: threshold 0.61" in section
    # the per-question table shows the cited receipt against the gold one
    qtable = page[page.index('<table id="qtable"'):]
    assert "<th>cited (top claim) vs gold</th>" in qtable
    assert "✓ PP 34/2021 Pasal 12 ayat (3) <br><small>gold: PP 34/2021 Pasal 12 ayat (2) huruf h</small>" in qtable
    assert qtable.count("<tr class=") == 3 and qtable.count("<td") == 3 * 16
    parser = _Balance()
    parser.feed(page)
    assert parser.errors == [] and parser.stack == []


@pytest.mark.unit
def test_no_receipts_no_section_and_leave_out_section():
    page = render_html(_report(), _rows())
    assert "Receipts against" not in page and "Leave one out" not in page and "cited (top claim)" not in page
    report = _report()
    report["leave_out"] = {"law": "PP 35/2021", "questions": 50, "answered": 12, "answered_rate": 0.24,
                           "answered_from_another": 10, "answered_from_another_rate": 0.2, "answered_ambiguous": 2,
                           "answered_ambiguous_rate": 0.04, "answered_citing_removed": 0, "refusals": 38,
                           "refusal_rate": 0.76, "laws_cited": {"PP 34/2021": 7, "PP <94>/2021": 3},
                           "removed_documents": [{"doc_id": "pp-35-2021", "name": "PP 35/2021"}]}
    section = _section(render_html(report, _rows()), "Leave one out")
    assert "10 (20.0%)" in section and "2 (4.0%)" in section and "38 (76.0%)" in section
    assert "PP 35/2021 (pp-35-2021)" in section and "PP &lt;94&gt;/2021" in section
    report["receipts"] = {"levels": "bad", "pasal_by_band": None, "span": None, "curve": [{}]}
    page = render_html(report, _rows())
    assert "No answered question: no curve." in page
    parser = _Balance()
    parser.feed(page)
    assert parser.errors == [] and parser.stack == []
