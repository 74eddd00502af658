"""How a result is shown as readable text, in Indonesian or English (its JSON: pipeline/responses.py)."""
from __future__ import annotations

import textwrap

from .. import status
from ..restatements import restating
from ..audit import LOCAL_KEY
from ..decision import DOCUMENT_NOT_IN_CORPUS, category_words, reason_text, unmentioned_text
from ..types import Result

LABELS = {
    "id": {
        "question": "Pertanyaan", "answer": "JAWABAN", "refusal": "TIDAK DAPAT DIJAWAB", "direct": "Jawaban langsung", "why_near": "memuat",
        "band": {"TINGGI": "TINGGI", "SEDANG": "SEDANG", "RENDAH": "RENDAH"},
        "unsupported": "Klaim tidak didukung (tidak ditampilkan sebagai jawaban)",
        "example": "CONTOH/ILUSTRASI — bukan ketentuan", "conflict": "Sumber saling bertentangan",
        "ambiguous": "Lebih dari satu peraturan menjawab",
        "missing": "Kategori bukti yang tidak ditemukan", "nearest": "Sumber terdekat yang ditemukan",
        "judge": "penilai", "no_verdict": "tanpa putusan (keyakinan dibatasi di bawah TINGGI)",
        "confidence": "keyakinan", "trace": "Jejak",
        "caps": {"answerability": "dibatasi peluang kutipan menjawab pertanyaan", "no_verdict": "dibatasi tanpa putusan",
                 "not_in_force": "dibatasi karena tidak berlaku pada tanggal itu",
                 "unmentioned": "dibatasi: pertanyaan menyebut hal yang tidak ada di sumber mana pun",
                 "other_definitions": "dibatasi: istilah ini didefinisikan oleh peraturan lain, bukan yang dikutip "
                                      "klaim ini",
                 "several_definitions": "dibatasi: beberapa peraturan mendefinisikan istilah ini dan pertanyaan tidak "
                                        "menyebut satu pun",
                 "several_subjects": "dibatasi: peraturan lain menyatakan kalimat yang sama untuk subjek lain dan "
                                     "pertanyaan tidak menyebut yang mana",
                 "several_regulations": "dibatasi: lebih dari satu peraturan menjawab dan pertanyaan tidak menyebut "
                                        "yang mana",
                 None: "batas"}, "retried": "setelah satu kali kueri ulang korektif",
        "reasons": "alasan", "part": "Bagian", "number_without_basis": "ANGKA_TANPA_DASAR",
        "verdicts": {"entailed": "didukung", "neutral": "netral", "contradicted": "bertentangan"},
        "verbatim_match": "kutipan cocok kata demi kata dengan teks sumber (bukan penilaian makna)",
        "explain": {"judge": "apakah teks sumber mendukung klaim",
                    "retrieval": "seberapa cocok bagian yang dikutip dengan pertanyaan (skor urutan ulang)",
                    "generator": "peluang terkalibrasi bahwa kutipan menjawab pertanyaan"},
        "uploaded": "UNGGAHAN {who}, {when}; otoritas: {authority}",
        "restates": "kalimat yang sama juga di:",
        "authorities": {"official": "resmi", "primary": "primer", "institutional": "lembaga",
                        "academic": "akademik", "media": "media", "unknown": "tidak diketahui"},
    },
    "en": {
        "question": "Question", "answer": "ANSWER", "refusal": "NO ANSWER", "direct": "Direct answer", "why_near": "states",
        "band": {"TINGGI": "HIGH", "SEDANG": "MEDIUM", "RENDAH": "LOW"},
        "unsupported": "Claims not supported (not shown as an answer)",
        "example": "EXAMPLE/ILLUSTRATION — not a requirement", "conflict": "Records disagree",
        "ambiguous": "More than one regulation answers",
        "missing": "Evidence categories not found", "nearest": "Nearest records found",
        "judge": "judge", "no_verdict": "no verdict (confidence capped below HIGH)",
        "confidence": "confidence", "trace": "Trace",
        "caps": {"answerability": "capped at the chance the quote answers the question",
                 "no_verdict": "capped without a verdict", "not_in_force": "capped: not in force on that date",
                 "unmentioned": "capped: the question names something no record mentions",
                 "other_definitions": "capped: another regulation defines this term, not the one this claim quotes",
                 "several_definitions": "capped: several regulations define this term and the question names none",
                 "several_subjects": "capped: other regulations state this sentence of other subjects and the "
                                     "question says not which",
                 "several_regulations": "capped: more than one regulation answers and the question names none",
                 None: "cap"}, "retried": "after one corrective query rewrite",
        "reasons": "reasons", "part": "Part", "number_without_basis": "NUMBER_WITHOUT_BASIS",
        "verdicts": {"entailed": "entailed", "neutral": "neutral", "contradicted": "contradicted"},
        "verbatim_match": "the quote matches the source text word for word (not a judgement of meaning)",
        "explain": {"judge": "whether the source text supports the claim",
                    "retrieval": "how well the quoted passage matches the question (rerank score)",
                    "generator": "calibrated chance that the quote answers the question"},
        "uploaded": "UPLOADED by {who}, {when}; authority: {authority}",
        "restates": "the same sentence also in:",
        "authorities": {"official": "official", "primary": "primary", "institutional": "institutional",
                        "academic": "academic", "media": "media", "unknown": "unknown"},
    },
}


VERBATIM = "verbatim"  # the lite judge's name (backends/lite.py VerbatimJudge): an exact quote, not entailment


def _wrap(text: str, indent: str, width: int = 100) -> str:
    return textwrap.fill(" ".join(text.split()), width=width, initial_indent=indent, subsequent_indent=indent)


def _reason(reason: str, L: dict) -> str:
    return reason.replace("number_without_basis", f"number_without_basis ({L['number_without_basis']})")


def render_text(r: Result, lang: str | None = None) -> str:
    L = LABELS.get(lang or r.lang, LABELS["en"])
    lines = [f"{L['question']}: {r.question}", ""]
    supported = [c for c in r.claims if c.status == "supported"]
    demoted = [c for c in r.claims if c.status != "supported"]
    if r.outcome == "answer":
        lines.append(f"{L['answer']}" + (f" ({L['retried']})" if r.retried else ""))
        if r.not_in_corpus:  # said before the answer, so it is not read as that document's
            lines.append(f"  ⚠ {reason_text(DOCUMENT_NOT_IN_CORPUS, r.lang if lang is None else lang, r.not_in_corpus)}")
        if r.unmentioned:  # nor as being about something no record names
            lines.append(_wrap(f"⚠ {unmentioned_text(r.unmentioned, lang or r.lang)}", "  "))
    else:
        lines.append(f"{L['refusal']}: {r.reason}" + (f" ({L['retried']})" if r.retried else ""))
        if r.missing_categories:
            lines.append(f"  {L['missing']}: {', '.join(category_words(m, lang or r.lang) for m in r.missing_categories)}")
    if r.direct is not None:
        lines.append(_wrap(f"{L['direct']}: {r.direct.text}", "  "))
    if r.as_of is not None and supported:
        lines.append(f"  {status.as_of_words(r.as_of, lang or r.lang)}")
    multipart = len(r.parts) > 1
    for i, c in enumerate(supported, 1):
        conf = c.confidence
        band = L["band"][conf.band] if conf else "?"
        tag = f" [{L['example']}]" if c.is_example else ""
        part = f"{L['part']} {c.part + 1} · " if multipart else ""
        lines.append("")
        lines.append(_wrap(f"{i}. [{part}{band} {conf.value:.2f}]{tag} {c.text}", "  "))
        if c.standing is not None:
            mark = "✓" if c.standing.state == "in_force" else "⚠"
            lines.append(_wrap(f"{mark} {status.standing_words(c.standing, lang or r.lang)}", "     "))
        for x, again in zip(c.citations, restating(c)):
            if again:  # another place of its regulation that states the claim's sentence
                lines.append(f"     {L['restates']}")
            lines.append(_wrap(f"“{x.quote}”", "     "))
            pages = "" if not x.page else (f", p. {x.page[0]}" if x.page[0] == x.page[1]
                                           else f", pp. {x.page[0]}–{x.page[1]}")
            lines.append(f"     — {x.path or f'{x.document}, {x.location}'}{pages}  [{x.chunk_id[:12]}]")
            if x.uploaded_by and x.uploaded_by != LOCAL_KEY:  # an API upload, not the operator's own record
                lines.append("       " + L["uploaded"].format(who=x.uploaded_by, when=x.uploaded_at or "?",
                                                            authority=L["authorities"].get(x.authority or "unknown",
                                                                                           x.authority)))
        if c.verdict and c.verdict.judge == VERBATIM:  # the lite rule checks the words, not what they mean
            verdict = L["verbatim_match"]
        elif c.verdict and c.verdict.label:
            verdict = f"{L['verdicts'].get(c.verdict.label, c.verdict.label)} {c.verdict.score:.2f} ({c.verdict.judge})"
        else:
            verdict = L["no_verdict"]
        if conf:
            w = conf.weights
            arithmetic = (f"{w['judge']:.2f}×{(conf.judge or 0):.2f} + {w['retrieval']:.2f}×{conf.retrieval:.2f} + "
                          f"{w['generator']:.2f}×{conf.generator:.2f} = {conf.raw:.2f}"
                          + (f", {L['caps'].get(conf.capped_by, L['caps'][None])} {conf.cap:.2f}"
                             if conf.cap is not None else ""))
            lines.append(f"     {L['judge']}: {verdict} · {L['confidence']}: {arithmetic}")
    for cf in r.conflicts:
        lines.append("")
        lines.append(_wrap(f"⚠ {L['ambiguous' if cf.kind == 'ambiguous' else 'conflict']}: {cf.detail}", "  "))
    if demoted:
        lines.append("")
        lines.append(f"{L['unsupported']}:")
        for c in demoted:
            lines.append(_wrap(f"✗ {c.text}", "  "))
            lines.append(_wrap(f"{L['reasons']}: " + "; ".join(_reason(x, L) for x in c.reasons), "    "))
    if r.outcome == "refusal" and r.nearest:
        lines.append("")
        lines.append(f"{L['nearest']}:")
        for n in r.nearest:
            why = f"  ({L['why_near']}: {', '.join(n.why)})" if n.why else ""
            lines.append(f"  {n.score:.2f}  {n.path or f'{n.document}, {n.location}'}  [{n.chunk_id[:12]}]{why}")
            lines.append(_wrap(n.text[:240] + ("…" if len(n.text) > 240 else ""), "        "))
    lines.append("")
    lines.append(f"{L['trace']}: {r.trace_id}" + (f"  ({r.trace_path})" if r.trace_path else ""))
    return "\n".join(lines)
