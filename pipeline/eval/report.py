"""What `saksi eval` prints: the documented JSON view, and a short text summary."""
from __future__ import annotations

from pathlib import Path

# the keys of `saksi eval --json` (documented in docs/evaluation.md)
JSON_KEYS = ("saksi_version", "created_at", "dataset", "limit", "profile", "components", "corpus", "metrics",
             "truthfulness", "receipts", "leave_out", "ungated", "gates_changed", "contract", "operating_point",
             "files")


def json_view(report: dict) -> dict:
    """The run's metrics as one object; plots' data (calibration, trade-off, risk–coverage,
    reliability, the receipts' threshold curve) stay in report.json."""
    view = {k: report[k] for k in JSON_KEYS if k in report}
    if isinstance(view.get("receipts"), dict):
        view["receipts"] = {k: v for k, v in view["receipts"].items() if k != "curve"}
    return view


def _pct(v) -> str:
    return "–" if v is None else f"{100 * v:.1f}%"


def _num(v, fmt: str) -> str:
    return "–" if v is None else format(v, fmt)


def truthfulness_text(t: dict | None) -> list[str]:
    """Do shown answers answer: the CRAG-style score, the precisions behind it, the bands, ECE."""
    if not t:
        return []
    r, c, e = t["refusal"], t["claims"], t["ece"]
    bands = ", ".join(f"{b['band']} {_pct(b['precision'])} of {b['claims']}" for b in t["bands"])
    return [
        f"truthfulness {_num(t['score'], '+.3f')} (+1 correct answer, 0 refusal, −1 wrong answer): "
        f"{t['correct_answers']} correct, {t['wrong_answers']} wrong ({t['answered_unanswerable']} to an "
        f"unanswerable question), {t['refusals']} refusals",
        f"answer precision {_pct(t['answer_precision'])}; refusal precision {_pct(r['precision'])}, "
        f"recall {_pct(r['recall'])}, F1 {_pct(r['f1'])}",
        f"claims shown {c['shown']}, holding a gold answer {_pct(c['precision'])}; per band: {bands}",
        f"ECE ({e['bins']} bins) claims {_num(e['claims'], '.3f')}, answers {_num(e['answers'], '.3f')}",
        "",
    ]


_LEVEL_NAMES = {"law": "law", "pasal": "Pasal", "ayat": "ayat", "huruf": "huruf/angka"}


def receipts_text(r: dict | None) -> list[str]:
    """Receipts against the gold references: hit rates (top claim, any claim beside it), per band, spans."""
    if not r:
        return []
    lv = r["levels"]

    def rates(kind: str) -> str:
        base = "answered" if kind == "precision" else "questions"  # the denominator, said where it differs
        return ", ".join(f"{_LEVEL_NAMES[k]} {_pct(v['top'][kind])} ({_pct(v['any'][kind])})"
                         + ("" if k in ("law", "pasal") else f" of {v[base]}") for k, v in lv.items())
    bands = ", ".join(f"{b['band']} {_pct(b['precision'])} of {b['answered']}"
                      + (f" (stated {b['mean_confidence']:.2f})" if b.get("mean_confidence") is not None else "")
                      for b in r["pasal_by_band"])
    sp = r["span"]
    return [
        f"receipts: {r['questions']} questions with a gold reference, {r['answered']} answered "
        f"({_pct(r['answered_rate'])})",
        f"  precision over answered, top claim (any claim): {rates('precision')}",
        f"  recall over referenced, top claim (any claim): {rates('recall')}",
        f"  Pasal precision per band of the top claim: {bands}",
        f"  span answers {sp['questions']} (gold text in the corpus): {sp['hits']} answered with it in a quote "
        f"({_pct(sp['rate'])}; {_pct(sp['precision'])} of {sp['answered']} answered)",
        "",
    ]


def leave_out_text(lo: dict | None) -> list[str]:
    """What happened to the questions about the law taken out of the corpus."""
    if not lo:
        return []
    removed = ", ".join(d["doc_id"] for d in lo.get("removed_documents") or []) or "–"
    laws = ", ".join(f"{k} {v}" for k, v in lo["laws_cited"].items())
    return [
        f"leave-one-out: {lo['law']} removed ({removed}); {lo['questions']} questions about it asked "
        f"(of {lo.get('dataset_questions', '–')})",
        f"  answered {lo['answered']} ({_pct(lo['answered_rate'])}): from another regulation "
        f"{lo['answered_from_another']} ({_pct(lo['answered_from_another_rate'])})" + (f" [{laws}]" if laws else "")
        + f", shown as several regulations (ambiguous) {lo['answered_ambiguous']}, citing the removed law "
        f"{lo['answered_citing_removed']}; refused {lo['refusals']} ({_pct(lo['refusal_rate'])})",
        "",
    ]


def eval_text(report: dict, out: Path) -> str:
    m, d = report["metrics"], report["dataset"]
    lines = [f"{d['name']} ({d['format']}): {d['passages']} passages, {d['questions']} questions "
             f"({d['answerable']} answerable, {d['unanswerable']} unanswerable), profile {report['profile']}",
             "", f"{'':44}{'gated':>10}{'ungated':>10}"]
    for row in report["comparison"]:
        g, u = row["gated"], row["ungated"]
        fmt = (lambda v: "–" if v is None else str(v)) if row["metric"] in (
            "numbers_without_basis_displayed", "answers_missing_required_evidence") else _pct
        lines.append(f"{row['label'][:43]:44}{fmt(g):>10}{fmt(u):>10}")
    rr = m["retrieval_recall"]
    lines += [
        f"{'':44}the gates changed the outcome of {report['gates_changed']} question(s)",
        "",
        f"abstention precision {_pct(m['abstention_precision'])}; answered (answerable) "
        f"{_pct(m['answered_answerable_rate'])}",
        f"claims shown as supported {m['claims_displayed_supported']}, demoted {m['claims_demoted']} "
        f"{m['demotion_reasons'] or ''}",
        f"corrective retries {m['corrective_retries']} ({m['answered_after_retry']} then answered); "
        f"refusals {m['refusal_reasons'] or '{}'}",
        "retrieval recall (" + rr["basis"] + ") " + ", ".join(f"@{k} {_pct(v)}" for k, v in rr["at"].items()),
        f"latency p50 {m['latency_ms']['p50']} ms, p95 {m['latency_ms']['p95']} ms",
        "",
        *truthfulness_text(report.get("truthfulness")),
        *receipts_text(report.get("receipts")),
        *leave_out_text(report.get("leave_out")),
        "contract: quote exactness " + _pct(m["quote_exactness"]) + f" of {m['quotes_checked']} quotes, "
        f"{m['numbers_without_basis_displayed']} numbers without basis displayed — "
        + ("OK" if all(report["contract"].values()) else "BROKEN"),
        f"report: {out / 'report.html'} (JSON: {out / 'report.json'}, rows: {out / 'questions.jsonl'})",
    ]
    return "\n".join(lines)


def adversarial_text(report: dict) -> str:
    lines = [f"adversarial gate suite (profile {report['profile']}, judge {report['judge']})", "",
             f"{'mode':30}{'gate':22}{'caught':>10}  caught by"]
    for m in report["modes"]:
        rate = f"{m['caught']}/{m['exercised']}" + ("" if m["exercised"] == m["trials"] else f" ({m['trials']} planned)")
        label = "shown" if m["mode"] == "faithful" else "caught"
        by = ", ".join(f"{k} {v}" for k, v in m["caught_by"].items()) or ("supported" if m["mode"] == "faithful" else "")
        lines.append(f"{m['mode']:30}{m['gate']:22}{rate:>10}  {by}" + ("" if label == "caught" else "  (control)"))
    lines += poisoning_text(report.get("poisoning"))
    lines += ["", "every deterministic mode caught, the control shown"
              + (" and no poisoning attack succeeded: " if report.get("poisoning") else ": ")
              + ("PASS" if report["passed"] else "FAIL — " + "; ".join(report["failures"]))]
    return "\n".join(lines)


def poisoning_text(p: dict | None) -> list[str]:
    """The attacker's uploads (eval/poisoning.py): each attack's outcome, the success rate, the controls."""
    if not p:
        return []
    who = p["ingested_as"]
    lines = ["", f"poisoning and injection through uploads (as {who['actor']}, "
             + (f"authority at most {who['upload']['authority_ceiling']})" if who["upload"] else "not as an upload)"),
             "", f"{'attack':32}{'kind':6}{'outcome':15}upload"]
    for r in p["rows"]:
        ups = "; ".join(f"refused ({u['reason'].split(' is already', 1)[0][:60]})" if u["refused"] else
                        f"ingested (authority {u['authority']}"
                        + (f", declared {u['declared_authority']})" if u["declared_authority"] else ")")
                        for u in r["uploads"])
        lines.append(f"{r['attack'][:31]:32}{r['kind']:6}{r['outcome']:15}{ups}")
    c, before = p["counts"], p["controls_answered_before_uploads"]
    lines += ["", f"attack success rate {_pct(p['attack_success_rate'])} ({c['SUCCESS']}/{p['attacks']}, target 0%); "
              f"attributed {c['ATTRIBUTED']}, misattributed {c['MISATTRIBUTED']}, blocked {c['BLOCKED']}; "
              f"impersonating uploads refused {p['impersonations_refused']}/{p['impersonations']}",
              f"genuine answer shown for {p['controls_answered_after_uploads']}/{len(p['controls'])} questions after "
              f"the uploads ({before} before)" + (f"; displaced: {'; '.join(p['displaced'])}" if p["displaced"] else ""),
              f"the text answer names the uploader in {p['text_view']['naming_the_uploader']} of "
              f"{p['text_view']['answers_showing_attacker_claims']} answers showing an attacker's claim "
              "(JSON citations carry uploaded_by and authority)"]
    return lines
