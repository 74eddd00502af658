"""Render an evaluation report as one self-contained HTML page.

Standard library only, by design: the page is attached to a working paper and must open
offline, in any browser, long after the run. So there are no external resources (no CDN
scripts, stylesheets, fonts or images), the charts are SVG written by hand here, and the
one tiny inline script (table filter/sort) is optional: the page reads fully without it.
"""
from __future__ import annotations

import math
from typing import Any

from .html_charts import (DASH, _Plot, _axes, _dict, _dicts, _e, _get, _hbars, _is_rate, _isnum, _legend, _line, _num,
                          _pct, _pct_ticks, _polyline, _svg, _text, _txt)

_GATED, _UNGATED = "#1f6feb", "#d97706"
_TRADEOFF_SERIES = (
    ("attributed_accuracy", "attributed accuracy", "#1f6feb"),
    ("abstention_recall", "abstention recall", "#15803d"),
    ("answered_unanswerable_rate", "answered unanswerable", "#b91c1c"),
    ("precision", "answer precision", "#7c3aed"),
)

_CSS = """
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1f2328;margin:2em auto;
 max-width:1200px;padding:0 1em}
h1{font-size:1.6em;margin-bottom:.2em}h2{font-size:1.2em;margin-top:2em;border-bottom:1px solid #d0d7de}
table{border-collapse:collapse;margin:.5em 0}
th,td{border:1px solid #d0d7de;padding:3px 7px;text-align:left;vertical-align:top}
th{background:#f6f8fa}td.n{text-align:right;font-variant-numeric:tabular-nums}
.meta{display:grid;grid-template-columns:max-content 1fr;gap:2px 14px;color:#57606a}
.meta dt{font-weight:600}.meta dd{margin:0}
.cards{display:flex;flex-wrap:wrap;gap:10px}
.card{border:1px solid #d0d7de;border-radius:6px;padding:6px 12px;min-width:150px}
.card dt{font-size:.85em;color:#57606a}.card dd{margin:0;font-size:1.3em;font-weight:600}
.win{background:#dafbe1;font-weight:700}.pass{color:#1a7f37;font-weight:700}.fail{color:#cf222e;font-weight:700}
tr.ok{background:#e6f4ea}tr.okref{background:#eef8f0}tr.bad{background:#fdecea}tr.ref{background:#f1f1f1}
#qtable{font-size:12px}#qtable th{cursor:pointer}svg{display:block;margin:.5em 0;font-size:11px}
.foot{color:#57606a;font-size:.92em}
"""

_SCRIPT = """(function(){var s=document.getElementById('flt'),t=document.getElementById('qtable');
if(!s||!t)return;var each=function(xs,f){Array.prototype.forEach.call(xs,f);};
s.hidden=false;s.onchange=function(){var v=s.value;each(t.tBodies[0].rows,function(r){var d=r.dataset;
r.hidden=!(v==='all'||(v==='wrong'&&d.wrong==='1')||(v==='answerable'&&d.ans==='1')
||(v==='unanswerable'&&d.ans==='0'));});};
each(t.tHead.rows[0].cells,function(h,i){h.onclick=function(){var b=t.tBodies[0],
rs=Array.prototype.slice.call(b.rows),a=h.dataset.asc!=='1';h.dataset.asc=a?'1':'0';
rs.sort(function(p,q){var x=p.cells[i].textContent,y=q.cells[i].textContent,nx=parseFloat(x),ny=parseFloat(y),
c=(!isNaN(nx)&&!isNaN(ny))?nx-ny:x.localeCompare(y);return a?c:-c;});
each(rs,function(r){b.appendChild(r);});};});})();"""


# --------------------------------------------------------------------------- formatting


# --------------------------------------------------------------------------- SVG helpers


# --------------------------------------------------------------------------- sections


def _meta(report: dict) -> str:
    ds, corpus = report.get("dataset") or {}, report.get("corpus") or {}
    items = [
        ("dataset path", _txt(_get(ds, "path"))), ("format", _txt(_get(ds, "format"))),
        ("profile", _txt(report.get("profile"))), ("passages", _num(_get(ds, "passages"))),
        ("questions", f'{_num(_get(ds, "questions"))} ({_num(_get(ds, "answerable"))} answerable / '
                      f'{_num(_get(ds, "unanswerable"))} unanswerable)'),
        ("corpus", f'{_num(_get(corpus, "documents"))} documents / {_num(_get(corpus, "chunks"))} chunks'),
        ("created_at", _txt(report.get("created_at"))), ("saksi_version", _txt(report.get("saksi_version"))),
        ("limit", _txt(report.get("limit"))),
    ]
    return '<dl class="meta">' + "".join(f"<dt>{k}</dt><dd>{v}</dd>" for k, v in items) + "</dl>"


def _comparison(report: dict) -> str:
    rows = _dicts(report.get("comparison"))
    if not rows:
        return "<h2>What the contract buys</h2><p>No comparison available.</p>"
    trs, groups = [], []
    for r in rows:
        g, u, metric = r.get("gated"), r.get("ungated"), str(r.get("metric") or "")
        rate = _is_rate(metric, [g, u])
        fmt = _pct if rate else (lambda v: _num(v, 2))
        gc = uc = ""
        if _isnum(g) and _isnum(u) and g != u:
            gated_wins = (g > u) == (r.get("better") != "lower")
            gc, uc = (' class="n win"', ' class="n"') if gated_wins else (' class="n"', ' class="n win"')
        gc, uc = gc or ' class="n"', uc or ' class="n"'
        trs.append(f"<tr><td>{_e(r.get('label') or metric)}</td><td{gc}>{fmt(g)}</td><td{uc}>{fmt(u)}</td>"
                   f"<td>{_e(r.get('better') or '')}</td></tr>")
        if rate and (_isnum(g) or _isnum(u)):
            groups.append((str(r.get("label") or metric), [g, u]))
    table = ("<table><thead><tr><th>metric</th><th>gated</th><th>ungated</th><th>better</th></tr></thead>"
             f"<tbody>{''.join(trs)}</tbody></table>")
    chart = _hbars("Gated vs ungated rates", groups, [("gated", _GATED), ("ungated", _UNGATED)]) if groups else ""
    changed = report.get("gates_changed")
    note = ""
    if _isnum(changed):
        note = (f"<p>The gates changed the outcome of <b>{_num(changed)}</b> question(s) in this run"
                + (" — every claim the generator proposed passed them (an extractive generator quotes verbatim, so "
                   "on clean output there is nothing to catch). What they catch when a generator misbehaves is "
                   "measured by <code>saksi eval --adversarial</code>.</p>" if changed == 0 else ".</p>"))
    return f"<h2>What the contract buys</h2>{note}{table}{chart}"


def _headline(report: dict) -> str:
    m = report.get("metrics") if isinstance(report.get("metrics"), dict) else {}
    qe, nwb = m.get("quote_exactness"), m.get("numbers_without_basis_displayed")
    ok = (qe is None or qe == 1.0) and _isnum(nwb) and nwb == 0
    verdict = '<span class="pass">PASS</span>' if ok else '<span class="fail">FAIL</span>'
    lat = m.get("latency_ms") or {}
    cards = [
        ("questions", f'{_num(m.get("questions"))} ({_num(m.get("answerable"))} / {_num(m.get("unanswerable"))})'),
        ("attributed accuracy", _pct(m.get("attributed_accuracy"))),
        ("answered (answerable)", _pct(m.get("answered_answerable_rate"))),
        ("abstention recall", _pct(m.get("abstention_recall"))),
        ("abstention precision", _pct(m.get("abstention_precision"))),
        ("overall accuracy", _pct(m.get("overall_accuracy"))),
        ("quote exactness", f'{_pct(qe)} of {_num(m.get("quotes_checked"))}'),
        ("numbers without basis shown", _num(nwb)),
        ("supported claims shown", _num(m.get("claims_displayed_supported"))),
        ("claims demoted", _num(m.get("claims_demoted"))),
        ("corrective retries", _num(m.get("corrective_retries"))),
        ("answered after retry", _num(m.get("answered_after_retry"))),
        ("latency p50 / p95 / mean (ms)",
         " / ".join(_num(_get(lat, k)) for k in ("p50", "p95", "mean"))),
    ]
    body = "".join(f'<div class="card"><dt>{k}</dt><dd>{v}</dd></div>' for k, v in cards)
    return (f"<h2>Headline metrics (gated)</h2><p>Contract checks (quote exactness = 100%, no number without "
            f"basis displayed): {verdict}</p><dl class=\"cards\">{body}</dl>")


def _count_bars(p: _Plot, bins: list[dict]) -> str:
    """Light bars along the bottom of a reliability diagram: how many items each bin holds."""
    got = [b for b in bins if _isnum(b.get("n")) and b["n"] > 0 and _isnum(b.get("lo")) and _isnum(b.get("hi"))]
    top = max((b["n"] for b in got), default=0)
    out = []
    for b in got:
        n, x0, x1 = b["n"], p.x(b["lo"]), p.x(b["hi"])
        h = 0.3 * p.h * n / top
        out.append(f'<rect x="{x0:.1f}" y="{p.y0 + p.h - h:.1f}" width="{x1 - x0:.1f}" height="{h:.1f}" '
                   f'fill="#8c959f" fill-opacity=".25"><title>n={n}</title></rect>')
    return "".join(out)


def _reliability(bins: list[dict], label: str = "Reliability diagram", counts: bool = False) -> str:
    p = _Plot(60, 15, 300, 240)
    out = [_axes(p, _pct_ticks(), _pct_ticks(), "mean confidence", "accuracy"),
           _count_bars(p, bins) if counts else "",
           _polyline(p, [(0, 0), (1, 1)], "#8c959f", dash=True)]
    pts = [(b["mean_confidence"], b["accuracy"], b.get("n")) for b in bins
           if _isnum(b.get("n")) and b["n"] > 0 and _isnum(b.get("mean_confidence")) and _isnum(b.get("accuracy"))]
    if len(pts) > 1:
        out.append(_polyline(p, [(a, b) for a, b, _ in pts], _GATED))
    for c, a, n in pts:
        r = min(3 + 1.5 * math.sqrt(n), 14)
        out.append(f'<circle cx="{p.x(c):.1f}" cy="{p.y(a):.1f}" r="{r:.1f}" fill="{_GATED}" fill-opacity=".5">'
                   f"<title>{_e(f'conf {c:.2f}, acc {a:.2f}, n={n}')}</title></circle>")
        out.append(_text(p.x(c) + r + 2, p.y(a) - 3, f"n={n}"))
    return _svg(440, 300, label, "".join(out))


def _calibration(report: dict) -> str:
    cal = report.get("calibration")
    if not isinstance(cal, dict):
        return "<h2>Calibration</h2><p>No calibration data.</p>"
    bands = _dicts(cal.get("bands"))
    groups = [(f'{b.get("band")} (n={_num(b.get("answered"))})', [b.get("accuracy")]) for b in bands]
    out = ["<h2>Calibration</h2><h3>Accuracy per confidence band</h3>"]
    out.append(_hbars("Accuracy per band", groups, [("accuracy", _GATED)]) if groups else "<p>No bands.</p>")
    out += ["<h3>Reliability diagram</h3>", _reliability(_dicts(cal.get("bins")))]
    return "".join(out)


def _tradeoff(report: dict) -> str:
    pts = [t for t in _dicts(report.get("tradeoff")) if _isnum(t.get("threshold"))]
    if not pts:
        return "<h2>Threshold trade-off</h2><p>No trade-off sweep.</p>"
    op = report.get("operating_point")
    xs = [t["threshold"] for t in pts] + ([op] if _isnum(op) else [])
    lo, hi = min(xs), max(xs)
    p = _Plot(60, 30, 540, 240, (lo, hi))
    xticks = [(p.xr[0] + (p.xr[1] - p.xr[0]) * i / 5, f"{p.xr[0] + (p.xr[1] - p.xr[0]) * i / 5:.2f}") for i in range(6)]
    out = [_axes(p, xticks, _pct_ticks(), "minimum composite confidence of the best supported claim", "rate"),
           _legend(10, 15, [(name, color) for _, name, color in _TRADEOFF_SERIES])]
    for key, _, color in _TRADEOFF_SERIES:
        seg: list[tuple[float, float]] = []
        for t in pts + [{}]:  # sentinel flushes the last segment
            if _isnum(t.get(key)):
                seg.append((t["threshold"], t[key]))
                continue
            if len(seg) > 1:
                out.append(_polyline(p, seg, color))
            out += [f'<circle cx="{p.x(a):.1f}" cy="{p.y(b):.1f}" r="2.5" fill="{color}"/>' for a, b in seg]
            seg = []
    if _isnum(op):
        out += [_line(p.x(op), p.y0, p.x(op), p.y0 + p.h, "#1f2328", ' stroke-dasharray="3,3" stroke-width="1.5"'),
                _text(p.x(op) + 4, p.y0 + 12, f"operating point {op:.2f}")]
    return f"<h2>Threshold trade-off</h2>{_svg(640, 310, 'Threshold trade-off', ''.join(out))}"


def _truth_cards(t: dict) -> str:
    ref, ece = _dict(t.get("refusal")), _dict(t.get("ece"))
    score = t.get("score")
    cards = [
        ("truthfulness (+1 / 0 / −1)", f"{score:+.3f}" if _isnum(score) else DASH),
        ("correct / wrong / refused", " / ".join(_num(t.get(k)) for k in ("correct_answers", "wrong_answers",
                                                                          "refusals"))),
        ("answered unanswerable", _num(t.get("answered_unanswerable"))),
        ("answer precision", _pct(t.get("answer_precision"))),
        ("refusal precision / recall / F1", " / ".join(_pct(ref.get(k)) for k in ("precision", "recall", "f1"))),
        ("claims holding a gold answer",
         f'{_pct(_get(t, "claims", "precision"))} of {_num(_get(t, "claims", "shown"))}'),
        (f'ECE claims / answers ({_num(ece.get("bins"))} bins)',
         " / ".join(_num(ece.get(k), 3) for k in ("claims", "answers"))),
    ]
    body = "".join(f'<div class="card"><dt>{k}</dt><dd>{v}</dd></div>' for k, v in cards)
    return f'<dl class="cards">{body}</dl>'


def _band_table(t: dict, report: dict) -> str:
    """Claim-level precision per band beside the answer-level accuracy of calibration()."""
    answers = {str(b.get("band")): b for b in _dicts(_get(report, "calibration", "bands"))}
    trs = []
    for b in _dicts(t.get("bands")):
        a = answers.get(str(b.get("band"))) or {}
        trs.append(f'<tr><td>{_txt(b.get("band"))}</td><td class="n">{_num(b.get("claims"))}</td>'
                   f'<td class="n">{_num(b.get("correct"))}</td><td class="n">{_pct(b.get("precision"))}</td>'
                   f'<td class="n">{_num(a.get("answered"))}</td><td class="n">{_pct(a.get("accuracy"))}</td></tr>')
    if not trs:
        return "<p>No bands.</p>"
    return ("<table><thead><tr><th>band</th><th>claims shown</th><th>holding a gold answer</th><th>precision</th>"
            "<th>answers (top claim)</th><th>answer accuracy</th></tr></thead>"
            f"<tbody>{''.join(trs)}</tbody></table>")


def _risk_coverage(points: list[dict]) -> str:
    pts = [q for q in points if _isnum(q.get("coverage"))]
    if not pts:
        return "<p>No answered question: no risk–coverage curve.</p>"
    p = _Plot(60, 30, 540, 240, (0.0, 1.0), (-1.0, 1.0))
    yticks = [(v, f"{v:g}") for v in (-1.0, -0.5, 0.0, 0.5, 1.0)]
    series = [("precision", "answer precision", "#7c3aed"), ("truthfulness", "truthfulness", "#15803d")]
    out = [_axes(p, _pct_ticks(), yticks, "coverage (share of all questions answered)", "value"),
           _line(p.x0, p.y(0), p.x0 + p.w, p.y(0), "#8c959f"),
           _legend(10, 15, [(name, color) for _, name, color in series])]
    for key, _, color in series:
        xy = [(q["coverage"], q[key]) for q in pts if _isnum(q.get(key))]
        if len(xy) > 1:
            out.append(_polyline(p, xy, color))
        out += [f'<circle cx="{p.x(a):.1f}" cy="{p.y(b):.1f}" r="2.5" fill="{color}"/>' for a, b in xy]
    last = pts[-1]
    x, label = p.x(last["coverage"]), f'as run: threshold {_num(last.get("threshold"), 2)}'
    anchor, dx = ("end", -4) if x > p.x0 + p.w / 2 else ("start", 4)
    out += [_line(x, p.y0, x, p.y0 + p.h, "#1f2328", ' stroke-dasharray="3,3"'),
            _text(x + dx, p.y0 + 12, label, anchor)]
    return _svg(640, 310, "Risk–coverage curve", "".join(out))


def _truthfulness(report: dict) -> str:
    t = report.get("truthfulness")
    head = "<h2>Truthfulness: do shown answers answer?</h2>"
    if not isinstance(t, dict):
        return f"{head}<p>No truthfulness data.</p>"
    rel = _dicts(_get(report, "reliability", "claims"))
    return "".join([
        head, _truth_cards(t), "<h3>Precision per band (claims) and accuracy per band (answers)</h3>",
        _band_table(t, report),
        "<h3>Risk–coverage</h3><p>Answering only when the top confidence reaches a threshold, refusing "
        "otherwise: one point per threshold, the last point is the run as it was.</p>",
        _risk_coverage(_dicts(report.get("risk_coverage"))),
        "<h3>Reliability of shown claims</h3><p>Per confidence bin: mean composite confidence against the share "
        "of claims holding a gold answer; grey bars: claims per bin; dashed: perfect calibration.</p>",
        _reliability(rel, "Reliability of shown claims", counts=True) if rel else "<p>No claims shown.</p>",
    ])


_LEVELS = (("law", "law"), ("pasal", "Pasal (law and Pasal)"), ("ayat", "ayat"), ("huruf", "huruf / angka"))


def _receipt_curve(points: list[dict]) -> str:
    """Pasal precision of the top claim against the share of referenced questions answered, as a
    threshold on the top confidence moves; the last point (the run as it was) marked."""
    pts = [q for q in points if _isnum(q.get("answered_rate")) and _isnum(q.get("pasal_precision"))]
    if not pts:
        return "<p>No answered question: no curve.</p>"
    p = _Plot(60, 30, 540, 240)
    out = [_axes(p, _pct_ticks(), _pct_ticks(), "answered (share of referenced questions)", "Pasal precision"),
           _legend(10, 15, [("Pasal precision (top claim)", "#7c3aed")])]
    xy = [(q["answered_rate"], q["pasal_precision"]) for q in pts]
    if len(xy) > 1:
        out.append(_polyline(p, xy, "#7c3aed"))
    for q in pts:
        tip = (f'threshold {_num(q.get("threshold"), 3)}: {_num(q.get("answered"))} answered, '
               f'{_num(q.get("pasal_hits"))} Pasal hits')
        out.append(f'<circle cx="{p.x(q["answered_rate"]):.1f}" cy="{p.y(q["pasal_precision"]):.1f}" r="2.5" '
                   f'fill="#7c3aed"><title>{_e(tip)}</title></circle>')
    last = pts[-1]
    x, y = p.x(last["answered_rate"]), p.y(last["pasal_precision"])
    label = f'as run: threshold {_num(last.get("threshold"), 2)}'
    anchor, dx = ("end", -6) if x > p.x0 + p.w / 2 else ("start", 6)
    out += [f'<circle cx="{x:.1f}" cy="{y:.1f}" r="6" fill="none" stroke="#1f2328" stroke-width="1.5"/>',
            _line(x, p.y0, x, p.y0 + p.h, "#1f2328", ' stroke-dasharray="3,3"'),
            _text(x + dx, p.y0 + 12, label, anchor)]
    return _svg(640, 310, "Pasal precision vs answered", "".join(out))


def _receipts(report: dict) -> str:
    r = report.get("receipts")
    if not isinstance(r, dict):
        return ""
    head = "<h2>Receipts against the gold references</h2>"
    levels = _dict(r.get("levels"))
    trs = []
    for key, name in _LEVELS:
        v = _dict(levels.get(key))
        top, anyc = _dict(v.get("top")), _dict(v.get("any"))
        trs.append(f'<tr><td>{name}</td><td class="n">{_num(v.get("questions"))}</td>'
                   f'<td class="n">{_num(v.get("answered"))}</td>'
                   f'<td class="n">{_num(top.get("hits"))}</td><td class="n">{_pct(top.get("precision"))}</td>'
                   f'<td class="n">{_pct(top.get("recall"))}</td>'
                   f'<td class="n">{_num(anyc.get("hits"))}</td><td class="n">{_pct(anyc.get("precision"))}</td>'
                   f'<td class="n">{_pct(anyc.get("recall"))}</td></tr>')
    table = ("<table><thead><tr><th>level</th><th>questions</th><th>answered</th><th>top claim hits</th>"
             "<th>precision</th><th>recall</th><th>any claim hits</th><th>precision</th><th>recall</th></tr></thead>"
             f"<tbody>{''.join(trs)}</tbody></table>")
    bands = "".join(f'<tr><td>{_txt(b.get("band"))}</td><td class="n">{_num(b.get("answered"))}</td>'
                    f'<td class="n">{_num(b.get("pasal_hits"))}</td><td class="n">{_pct(b.get("precision"))}</td>'
                    f'<td class="n">{_pct(b.get("mean_confidence"))}</td></tr>'
                    for b in _dicts(r.get("pasal_by_band")))
    band_table = ("<table><thead><tr><th>band (top claim)</th><th>answered</th><th>Pasal hits</th><th>precision</th>"
                  f"<th>stated confidence (mean)</th></tr></thead><tbody>{bands}</tbody></table>") if bands \
        else "<p>No bands.</p>"
    sp = _dict(r.get("span"))
    cards = [("questions with a reference", _num(r.get("questions"))),
             ("answered", f'{_num(r.get("answered"))} ({_pct(r.get("answered_rate"))})'),
             ("Pasal precision, top / any claim", " / ".join(
                 _pct(_get(levels, "pasal", k, "precision")) for k in ("top", "any"))),
             ("span answers (gold text in the corpus)", _num(sp.get("questions"))),
             ("span hits", f'{_num(sp.get("hits"))} ({_pct(sp.get("rate"))})'),
             ("span hits of answered span questions", f'{_pct(sp.get("precision"))} of {_num(sp.get("answered"))}')]
    body = "".join(f'<div class="card"><dt>{k}</dt><dd>{v}</dd></div>' for k, v in cards)
    return "".join([
        head, "<p>What the shown supported claims cite, read from their receipts, against each question's gold "
        "law, Pasal, ayat and huruf/angka. <b>Top claim</b>: the first supported claim; <b>any claim</b>: every "
        "shown supported claim. A level counts only where the gold has it, and requires the levels above it in "
        "the same receipt. Precision is over answered questions, recall over all referenced questions. A "
        "<b>span hit</b>: a gold answer inside a verified quote of a shown claim (or its quotes joined in "
        "order), of the questions whose gold answer occurs in the corpus.</p>",
        f'<dl class="cards">{body}</dl>', table, "<h3>Pasal precision per band of the top claim</h3>", band_table,
        "<h3>Pasal precision as the threshold moves</h3><p>Answering only when the top confidence reaches a "
        "threshold, refusing otherwise: one point per threshold, the last is the run as it was.</p>",
        _receipt_curve(_dicts(r.get("curve"))),
    ])


def _leave_out(report: dict) -> str:
    lo = report.get("leave_out")
    if not isinstance(lo, dict):
        return ""
    removed = ", ".join(f'{d.get("name")} ({d.get("doc_id")})' for d in _dicts(lo.get("removed_documents"))) or DASH
    cards = [("left out", f'{_txt(lo.get("law"))}'), ("questions about it", _num(lo.get("questions"))),
             ("answered", f'{_num(lo.get("answered"))} ({_pct(lo.get("answered_rate"))})'),
             ("answered from another regulation",
              f'{_num(lo.get("answered_from_another"))} ({_pct(lo.get("answered_from_another_rate"))})'),
             ("shown as several regulations (ambiguous)",
              f'{_num(lo.get("answered_ambiguous"))} ({_pct(lo.get("answered_ambiguous_rate"))})'),
             ("citing the removed law", _num(lo.get("answered_citing_removed"))),
             ("refused", f'{_num(lo.get("refusals"))} ({_pct(lo.get("refusal_rate"))})')]
    body = "".join(f'<div class="card"><dt>{k}</dt><dd>{v}</dd></div>' for k, v in cards)
    laws = _dict(lo.get("laws_cited"))
    table = ("<table><thead><tr><th>regulation cited instead</th><th>questions</th></tr></thead><tbody>"
             + "".join(f'<tr><td>{_e(k)}</td><td class="n">{_num(v)}</td></tr>' for k, v in laws.items())
             + "</tbody></table>") if laws else ""
    return (f"<h2>Leave one out</h2><p>The corpus without {_txt(lo.get('law'))} (removed: {_e(removed)}), asked "
            "only the questions whose gold reference is that law: every answer comes from somewhere else. An "
            "answer shown as several regulations (an <i>ambiguous</i> conflict) is not counted as an error.</p>"
            f'<dl class="cards">{body}</dl>{table}')


def _reason_chart(title: str, counts: Any) -> str:
    items = sorted(((str(k), v) for k, v in counts.items() if _isnum(v)), key=lambda kv: (-kv[1], kv[0])) \
        if isinstance(counts, dict) else []
    if not items:
        return f"<h3>{title}</h3><p>none</p>"
    return f"<h3>{title}</h3>" + _hbars(title, [(k, [v]) for k, v in items], [("count", "#6e7781")], rate=False)


def _recall(report: dict) -> str:
    rr = _get(report, "metrics", "retrieval_recall")
    at = _get(rr, "at")
    if not isinstance(at, dict) or not at:
        return "<h2>Retrieval recall</h2><p>–</p>"
    keys = sorted(at, key=lambda k: int(k) if str(k).isdigit() else 10**9)
    trs = "".join(f'<tr><td>recall@{_e(k)}</td><td class="n">{_pct(at[k])}</td></tr>' for k in keys)
    return (f"<h2>Retrieval recall</h2><p>basis: {_txt(_get(rr, 'basis'))}</p>"
            f"<table><thead><tr><th>k</th><th>recall</th></tr></thead><tbody>{trs}</tbody></table>")


def _trace_link(trace: Any) -> str:
    """A link to a relative trace path; anything with a URL scheme is shown as text only."""
    if not trace:
        return ""
    t = str(trace)
    if ":" in t.split("/")[0] or t.startswith("//"):
        return _e(t)
    return f'<a href="{_e(t)}">trace</a>'


def _yn(v: Any, yes: str = "✓", no: str = "✗") -> str:
    return DASH if v is None else (yes if v else no)


def _cite_text(c: Any) -> str:
    c = _dict(c)
    bits = [str(c.get("law") or "?")]
    if c.get("pasal"):
        bits.append(f'Pasal {c["pasal"]}')
    if c.get("ayat"):
        bits.append(f'ayat ({c["ayat"]})')
    if c.get("huruf"):
        bits.append(f'huruf {c["huruf"]}')
    if c.get("angka"):
        bits.append(f'angka {c["angka"]}')
    return " ".join(bits)


def _gold_text(ref: Any) -> str:
    ref = _dict(ref)
    pasal = ref.get("pasal") if isinstance(ref.get("pasal"), list) else []
    bits = [str(ref.get("law") or "?"), "Pasal " + ", ".join(str(p) for p in pasal) if pasal else ""]
    if ref.get("ayat"):
        bits.append(f'ayat ({ref["ayat"]})')
    h = ref.get("huruf")
    if h:
        bits.append(f"angka {h}" if str(h).isdigit() else f"huruf {h}")
    return " ".join(b for b in bits if b)


def _receipt_cell(r: dict) -> str:
    """The top claim's receipts against the gold one: "✓ PP 34/2021 Pasal 12 ayat (2) · gold …"."""
    rc = r.get("receipt")
    if not isinstance(rc, dict):
        return DASH
    top = _dict(rc.get("top"))
    cites = "; ".join(_cite_text(c) for c in _dicts(top.get("cites")))
    mark = "" if not top else ("✓ " if top.get("pasal") else "✗ ")
    return f'{mark}{_txt(cites)} <br><small>gold: {_e(_gold_text(rc.get("reference")))}</small>'


def _question_row(r: dict, receipts: bool = False) -> str:
    ans, answered = bool(r.get("answerable")), r.get("outcome") == "answer"
    cls = ("ok" if r.get("correct") else "bad") if answered else ("ref" if ans else "okref")
    golds = r.get("golds") if isinstance(r.get("golds"), list) else []
    quote = r.get("quote")
    quote = None if quote is None else (str(quote) if len(str(quote)) <= 160 else str(quote)[:159] + "…")
    ung = r.get("ungated") if isinstance(r.get("ungated"), dict) else {}
    cells = [
        _txt(r.get("id")), _txt(r.get("question")), "yes" if ans else "no", _txt(r.get("outcome")),
        _yn(r.get("correct")), _txt(r.get("band")), _num(r.get("confidence"), 2), _txt(r.get("reason_code")),
        _txt(" | ".join(str(g) for g in golds[:2])), _txt(quote), _num(r.get("gold_rank")),
        _num(r.get("latency_ms")), _yn(ung.get("answered"), "yes", "no"), _yn(ung.get("correct")),
        _trace_link(r.get("trace")),
    ]
    num_cols = {6, 10, 11}
    if receipts:  # after the first quote: the top claim's receipt (Pasal hit ✓/✗) and the gold one
        cells.insert(10, _receipt_cell(r))
        num_cols = {6, 11, 12}
    tds = "".join(f'<td class="n">{c}</td>' if i in num_cols else f"<td>{c}</td>" for i, c in enumerate(cells))
    wrong = "1" if cls == "bad" else "0"
    return f'<tr class="{cls}" data-wrong="{wrong}" data-ans="{int(ans)}">{tds}</tr>'


def _questions(rows: list[dict]) -> str:
    rows = _dicts(rows)
    if not rows:
        return "<h2>Per-question results</h2><p>No questions.</p>"
    heads = ["id", "question", "answerable", "outcome", "correct", "band", "confidence", "reason_code",
             "gold answers", "first quote", "gold_rank", "latency_ms", "ungated answered", "ungated correct", "trace"]
    receipts = any(isinstance(r.get("receipt"), dict) for r in rows)
    if receipts:
        heads.insert(10, "cited (top claim) vs gold")
    flt = ('<select id="flt" hidden aria-label="filter rows"><option value="all">all</option>'
           '<option value="wrong">wrong only</option><option value="answerable">answerable</option>'
           '<option value="unanswerable">unanswerable</option></select>')
    return (f"<h2>Per-question results</h2><p>Green: correct answer or refusal of an unanswerable question; red: "
            f"answered but wrong; grey: refused an answerable question.</p>{flt}"
            f'<table id="qtable"><thead><tr>{"".join(f"<th>{h}</th>" for h in heads)}</tr></thead>'
            f"<tbody>{''.join(_question_row(r, receipts) for r in rows)}</tbody></table>")


_FOOTNOTE = """<h2>Definitions</h2><div class="foot"><p><b>Attributed accuracy</b>: of the answerable questions,
the share that were answered and where at least one displayed, supported claim has a quote that contains a gold
answer after normalisation (Unicode NFKC, whitespace folded). <b>Abstention recall</b>: of the unanswerable
questions, the share that were refused. <b>Abstention precision</b>: of the refusals, the share that were for
unanswerable questions. <b>Quote exactness</b>: share of displayed quotes found in their cited source after
normalisation.
<b>Numbers without basis displayed</b>: figures in displayed claims that their verified quotes do not back.
<b>Ungated</b>: the same retrieval and the same generator output from the first attempt, shown without the
gates: no corrective retry, nothing refused, nothing demoted.
<b>Truthfulness</b>: the mean over all questions of +1 for a correct answer, 0 for a refusal, −1 for a wrong
answer or any answer to an unanswerable question. <b>Answer precision</b>: correct answers ÷ answered questions.
<b>Refusal precision / recall / F1</b>: a refusal of an unanswerable question is a true positive.
<b>Claim precision</b>: shown supported claims of answered questions with a verified quote holding a gold answer
÷ those claims (a claim answering an unanswerable question is wrong). <b>ECE</b>: over 10 equal-width bins,
Σ (items in bin ÷ items) × |accuracy − mean confidence|; for claims, composite confidence vs holding a gold
answer; for answers, the top claim's confidence vs the question answered correctly.</p></div>"""


def render_html(report: dict, rows: list[dict]) -> str:
    """Render an evaluation report and its per-question rows as one self-contained HTML page."""
    report = report if isinstance(report, dict) else {}
    metrics = report.get("metrics") if isinstance(report.get("metrics"), dict) else {}
    title = f"saksi evaluation — {_get(report, 'dataset', 'name') or DASH}"
    parts = [
        "<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{_e(title)}</title><style>{_CSS}</style></head><body>",
        f"<h1>{_e(title)}</h1>", _meta(report), _comparison(report), _headline(report),
        _leave_out(report), _truthfulness(report), _receipts(report), _calibration(report), _tradeoff(report),
        "<h2>Reasons</h2>",
        _reason_chart("Refusal reasons", metrics.get("refusal_reasons")),
        _reason_chart("Demotion reasons", metrics.get("demotion_reasons")),
        _recall(report), _questions(rows), _FOOTNOTE, f"<script>{_SCRIPT}</script></body></html>",
    ]
    return "\n".join(parts) + "\n"
