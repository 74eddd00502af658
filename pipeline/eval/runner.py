"""`saksi eval`: ask every question of a dataset, score the answers, write the report.

By default the dataset's passages become the corpus, ingested into `OUT/corpus` (kept
between runs of the same passages, rebuilt when they differ). Every question is asked
of the whole corpus through the one orchestrator, so an unanswerable question meets the
passage that nearly answers it and everything else besides. Each question leaves a
trace in `OUT/traces`; the report links to it.

The ungated view needs no second run: it is the first attempt's generator output from
the same trace, shown without gates — same retrieval, same generator, no retry, nothing
refused — so the two columns differ by the gates alone.

With `leave_out` ("PP 35/2021") the corpus is built as usual into its own directory
(`OUT/corpus-without-pp-35-2021`, never `OUT/corpus`), the documents cited as that law are
deleted from it through the corpus's own delete path, and only the questions whose gold
reference is that law are asked: does the pipeline refuse, or answer from another regulation?
"""
from __future__ import annotations

import asyncio
import datetime as dt
import hashlib
import json
import logging
import shutil
import time
from pathlib import Path
from typing import Callable

import yaml

from .. import __version__
from ..config import Profile
from ..corpus import Corpus, DataDir
from ..corpus.datadir import COLLECTIONS_DIR, DEFAULT_COLLECTION
from ..numbers import figures_without_basis
from ..progress import ProgressBar
from ..citations import stated
from ..text import contains_normalised
from ..trace import Trace
from ..types import Result, VerifiedClaim
from . import metrics
from .datasets import EvalDataError, EvalSet, Question, contains_answer, load_dataset
from .receipts import CorpusText, cite_hits, law_slug, parse_receipt, receipt_fields, same_law

log = logging.getLogger(__name__)

CORPUS_KEY = "eval-corpus.json"


class SourceChecker:
    """Re-checks a displayed quote against the file its chunk was cut from (not the gate's flag)."""

    def __init__(self):
        self._files: dict[str, str | None] = {}

    def _text(self, path: str) -> str | None:
        if path not in self._files:
            try:
                text = Path(path).read_text(encoding="utf-8")
                self._files[path] = text[1:] if text.startswith("\ufeff") else text
            except OSError:
                self._files[path] = None
        return self._files[path]

    def exact(self, source: str | None, span: tuple[int, int] | None, quote: str) -> bool:
        if not source or not span:
            return False
        text = self._text(source)
        return text is not None and contains_normalised(text[span[0]:span[1]], quote)


def write_passages(evalset: EvalSet, directory: Path) -> None:
    """One Markdown file per passage, front matter naming its id (the gold document)."""
    if directory.exists():
        shutil.rmtree(directory)
    directory.mkdir(parents=True)
    for p in evalset.passages:
        meta = {"id": p.pid, "title": p.title or f"{evalset.name} {p.pid}"}
        front = yaml.safe_dump(meta, allow_unicode=True, sort_keys=False)
        (directory / f"{p.pid}.md").write_text(f"---\n{front}---\n{p.text.strip()}\n", encoding="utf-8")


def corpus_key(evalset: EvalSet, profile: Profile, src: Path, leave_out: str | None = None) -> str:
    """What the kept corpus was built from: the passages, where their files live, the embedder
    (and the law left out of it)."""
    h = hashlib.sha256(str(src.resolve()).encode())
    if leave_out is not None:
        h.update(f"leave-out:{law_slug(leave_out)}".encode())
    for p in evalset.passages:
        h.update(json.dumps([p.pid, p.title, p.text], ensure_ascii=False).encode())
    for c in evalset.corpus_paths:
        h.update(str(c).encode())
    h.update(profile.settings.embedder.model_dump_json().encode())
    return h.hexdigest()[:20]


def prepare_corpus(evalset: EvalSet, profile: Profile, out: Path, corpus_dir: "Path | DataDir | None",
                   say: Callable[[str], None], leave_out: str | None = None) -> tuple[Corpus, dict]:
    """The corpus the questions are asked of, and a description of it for the report. With
    `leave_out`, the dataset's corpus in its own directory without the documents cited as that law."""
    started = time.perf_counter()
    if corpus_dir is not None and leave_out is not None:
        return _corpus_copy_without(corpus_dir, profile, out, leave_out, say)
    if corpus_dir is not None:
        corpus = Corpus(corpus_dir, profile)
        corpus.check()
        where = corpus_dir.root if isinstance(corpus_dir, DataDir) else corpus_dir
        return corpus, {"data_dir": str(where), "fresh": False, "from_dataset": False,
                        "documents": len(corpus.store.documents()), "chunks": corpus.store.count(),
                        "ingest_seconds": 0.0, "skipped_files": []}
    data_dir = out / ("corpus" if leave_out is None else f"corpus-without-{law_slug(leave_out)}")
    src = out / "passages"
    key = corpus_key(evalset, profile, src, leave_out)
    marker = data_dir / CORPUS_KEY
    reuse = marker.exists() and json.loads(marker.read_text()).get("key") == key
    write_passages(evalset, src)
    corpus = Corpus(data_dir, profile)
    say(f"{'updating' if reuse else 'building'} the corpus in {data_dir} "
        f"({len(evalset.passages)} passages{', ' + str(len(evalset.corpus_paths)) + ' corpus paths' if evalset.corpus_paths else ''})")
    report = corpus.ingest([src, *evalset.corpus_paths] if evalset.passages else list(evalset.corpus_paths),
                           rebuild=not reuse, progress=lambda m: log.info(m))
    info = {"data_dir": str(data_dir), "fresh": not reuse, "from_dataset": True,
            "documents": report.total_documents, "chunks": report.total_chunks,
            "ingest_seconds": round(time.perf_counter() - started, 1),
            "skipped_files": [f"{e.path}: {e.reason}" for e in report.errors]}
    if leave_out is not None:
        try:
            info["removed_documents"] = remove_law(corpus, leave_out, say)
        except BaseException:
            corpus.close()
            raise
        info["documents"], info["chunks"] = len(corpus.store.documents()), corpus.store.count()
        info["ingest_seconds"] = round(time.perf_counter() - started, 1)
    marker.write_text(json.dumps({"key": key}))
    return corpus, info


def _corpus_copy_without(corpus_dir: "Path | DataDir", profile: Profile, out: Path, leave_out: str,
                         say: Callable[[str], None]) -> tuple[Corpus, dict]:
    """A given corpus (`--corpus DATA_DIR [--collection NAME]`) without one law: copied, as the collection it is,
    into `OUT/corpus-without-LAW` (made again each run; the given corpus is never written), and the law deleted
    from the copy. So the statute book can be asked what it answers when the regulation a question is about is
    missing from it."""
    started = time.perf_counter()
    source = corpus_dir if isinstance(corpus_dir, DataDir) else DataDir(corpus_dir)
    with Corpus(source, profile) as given:  # refused as any --corpus is when its indexes disagree, or when it holds
        given.check()                       # no document of the law (before anything is copied); closed before
        law_documents(given, leave_out)     # its files are copied
    home = out / f"corpus-without-{law_slug(leave_out)}"
    shutil.rmtree(home, ignore_errors=True)
    copy = DataDir(home).collection(source.name)
    say(f"copying {source.root} to {copy.root}")
    # a default collection's directory also holds the named ones: those stay behind
    shutil.copytree(source.root, copy.root, ignore=shutil.ignore_patterns(COLLECTIONS_DIR)
                    if source.name == DEFAULT_COLLECTION else None)
    corpus = Corpus(copy, profile)
    try:
        removed = remove_law(corpus, leave_out, say)
        corpus.check()
    except BaseException:
        corpus.close()
        raise
    return corpus, {"data_dir": str(copy.root), "copied_from": str(source.root), "fresh": True,
                    "from_dataset": False, "documents": len(corpus.store.documents()),
                    "chunks": corpus.store.count(), "ingest_seconds": round(time.perf_counter() - started, 1),
                    "skipped_files": [], "removed_documents": removed}


def law_documents(corpus: Corpus, law: str) -> list:
    """The corpus's documents cited as `law`; an EvalDataError when it holds none."""
    docs = [d for d, _ in corpus.store.documents()]
    found = [d for d in docs if same_law(d.cite_as or d.title, law)]
    if not found:
        names = ", ".join(d.cite_as or d.title for d in docs[:8]) or "none"
        raise EvalDataError(f"--leave-out {law!r}: no document of the corpus is cited as that law "
                            f"(its documents: {names})")
    return found


def remove_law(corpus: Corpus, law: str, say: Callable[[str], None]) -> list[dict]:
    """Delete every document cited as `law` (through `Corpus.delete`: indexes and references follow);
    an error when the corpus holds none."""
    gone = law_documents(corpus, law)
    for d in gone:
        say(f"leaving out {d.cite_as or d.title} ({d.doc_id})")
        corpus.delete(d.doc_id, progress=lambda m: log.info(m))
    return [{"doc_id": d.doc_id, "name": d.cite_as or d.title} for d in gone]


def leave_out_questions(evalset: EvalSet, law: str) -> tuple[Question, ...]:
    """The questions whose gold reference is `law`; bad usage is an EvalDataError (exit 2)."""
    if not law.strip():
        raise EvalDataError("--leave-out names no law (e.g. --leave-out \"PP 35/2021\")")
    referenced = [q for q in evalset.questions if q.reference is not None]
    if not referenced:
        raise EvalDataError(f"{evalset.path}: no question has a gold 'reference', so --leave-out {law!r} "
                            "selects nothing")
    asked = tuple(q for q in referenced if same_law(q.reference.law, law))
    if not asked:
        laws = ", ".join(dict.fromkeys(q.reference.law for q in referenced))
        raise EvalDataError(f"--leave-out {law!r}: no question of {evalset.path} references that law "
                            f"(they reference {laws})")
    return asked


def corpus_text(corpus: Corpus) -> CorpusText:
    """Every document's rendition (the text its chunks are slices of): where span answers are looked for."""
    texts = []
    for d, _ in corpus.store.documents():
        try:
            texts.append(Path(d.rendition).read_text(encoding="utf-8") if d.rendition else "")
        except OSError:
            log.warning("cannot read the rendition of %s (%s)", d.doc_id, d.rendition)
    return CorpusText(texts)


def _gold_rank(trace: Trace, q: Question, by_passage: bool) -> int | None:
    """1-based rank of the gold passage (or, with an external corpus, of the first chunk
    containing a gold answer) in the first attempt's reranked candidates."""
    if not q.answerable:
        return None
    for rank, ch in _first_reranked(trace):
        if (ch.doc_id == q.passage) if by_passage else contains_answer(ch.text, q.golds):
            return rank
    return None


def _first_reranked(trace: Trace):
    """(1-based rank, chunk) of the first attempt's reranked candidates, in order."""
    if not trace.parts:
        return
    first = trace.parts[0].attempts[0]
    chunks = {c.chunk.chunk_id: c.chunk for c in first.candidates}
    for rank, cid in enumerate(first.reranked, 1):
        if cid in chunks:
            yield rank, chunks[cid]


def gold_pasal_rank(trace: Trace, q: Question) -> int | None:
    """1-based rank, in the first attempt's reranked candidates, of the first passage at the gold law and Pasal
    (its structural path read as a receipt is): whether the right provision was there to be read at all."""
    if q.reference is None:
        return None
    for rank, ch in _first_reranked(trace):
        if cite_hits(parse_receipt(" › ".join(x for x in (ch.path, ch.location) if x)), q.reference)["pasal"]:
            return rank
    return None


def _displayed(claims: tuple[VerifiedClaim, ...], checker: SourceChecker, golds: tuple[str, ...],
               every_claim: bool) -> dict:
    """What a reader is shown as the answer, checked: quotes against the source files,
    figures against the quotes, gold answers against the quotes."""
    shown = [c for c in claims if every_claim or c.status == "supported"]
    checked = exact = unbacked = 0
    correct = False
    for c in shown:
        quotes = [x.quote for x in c.citations if x.ok]
        for x in c.citations:
            checked += 1
            exact += x.ok if every_claim else checker.exact(x.rendition, x.chunk_span, x.quote)
        basis = quotes if not every_claim else [x.quote for x in c.citations]
        unbacked += bool(figures_without_basis(c.text, basis))
        if golds and any(contains_answer(x.quote, golds) for x in c.citations if every_claim or x.ok):
            correct = True
    return {"claims": len(shown), "quotes_checked": checked, "quotes_exact": exact,
            "numbers_without_basis": unbacked, "correct": correct,
            "unsupported": sum(1 for c in shown if c.status != "supported")}


def _shown_claims(supported: list[VerifiedClaim], q: Question) -> list[dict]:
    """Each supported claim's confidence and band, and whether one of its verified quotes holds a
    gold answer (a claim answering an unanswerable question never does)."""
    return [{"confidence": c.confidence.value if c.confidence else None,
             "band": c.confidence.band if c.confidence else None,
             "correct": q.answerable and any(contains_answer(x.quote, q.golds) for x in c.citations if x.ok)}
            for c in supported]


def _receipted(claim: VerifiedClaim) -> list:
    """The verified citations a claim's receipt is scored on: what the claim states and the provisions it refers to.
    Another ayat of its own passage quoted beside it (generator.bound_ayat: a condition, an exception, the subject it
    points back to) is shown, and holds a span answer like any shown quote, but is not what the claim cites: a claim
    quoting the wrong ayat does not reach the gold ayat because the gold ayat is quoted beside it. A claim in other
    words than its quotes (an LLM's) is scored on every citation."""
    said = stated(claim)
    own = {x.chunk_id for x, s in zip(claim.citations, said) if s}
    return [x for x, s in zip(claim.citations, said) if x.ok and (s or x.chunk_id not in own)]


def _receipt(q: Question, supported: list[VerifiedClaim], text: CorpusText | None) -> dict:
    """The row's `receipt`: what the shown supported claims cite against the gold reference."""
    claims = [{"paths": [parse_receipt(x.path, x.location, x.document) for x in _receipted(c)],
               "quotes": [x.quote for x in c.citations if x.ok],
               "band": c.confidence.band if c.confidence else None,
               "confidence": c.confidence.value if c.confidence else None} for c in supported]
    return receipt_fields(q.reference, claims, q.golds, text is not None and text.holds(q.golds))


def score(q: Question, result: Result, trace: Trace, latency_ms: float, checker: SourceChecker,
          by_passage: bool, trace_rel: str | None, text: CorpusText | None = None) -> dict:
    """One question's row; `text` (the corpus's texts) decides whether its gold answer is a span answer."""
    gated = _displayed(result.claims, checker, q.golds, every_claim=False)
    supported = [c for c in result.claims if c.status == "supported"]
    top = max((c.confidence.value for c in supported if c.confidence), default=None)
    band = next((c.confidence.band for c in supported if c.confidence and c.confidence.value == top), None)
    answered = result.outcome == "answer"
    first_quote = supported[0].citations[0].quote if supported and supported[0].citations else None
    top1 = bool(supported) and any(contains_answer(x.quote, q.golds) for x in supported[0].citations if x.ok)
    # ungated: every claim of each part's first attempt, shown as the answer
    first_claims = tuple(c for p in trace.parts for c in p.attempts[0].claims)
    ungated = _displayed(first_claims, checker, q.golds, every_claim=True)
    missing = any(p.attempts[0].sufficiency.missing for p in trace.parts)
    receipt = {} if q.reference is None else {"receipt": {**_receipt(q, supported, text),
                                                          "gold_pasal_rank": gold_pasal_rank(trace, q)}}
    return {
        "id": q.qid, "question": q.question, "answerable": q.answerable, "golds": list(q.golds),
        "passage": q.passage, "outcome": result.outcome,
        "correct": (answered and gated["correct"]) if q.answerable else not answered,
        "correct_top1": answered and q.answerable and top1,
        "confidence": top, "band": band, "reason_code": result.reason_code, "quote": first_quote,
        "shown_claims": _shown_claims(supported, q),
        "supported_claims": len(supported), "demoted_claims": len(result.claims) - len(supported),
        "demotion_reasons": [r.split(":", 1)[0] for c in result.claims if c.status != "supported" for r in c.reasons],
        "retried": result.retried, "quotes_checked": gated["quotes_checked"], "quotes_exact": gated["quotes_exact"],
        "numbers_without_basis": gated["numbers_without_basis"], "gold_rank": _gold_rank(trace, q, by_passage),
        "latency_ms": round(latency_ms, 1), "trace": trace_rel, "trace_id": result.trace_id,
        "conflicts": [c.kind for c in result.conflicts], **receipt,
        "ungated": {"answered": ungated["claims"] > 0,
                    "correct": (ungated["claims"] > 0 and ungated["correct"]) if q.answerable
                    else ungated["claims"] == 0,
                    "claims": ungated["claims"], "unsupported": ungated["unsupported"],
                    "quotes_checked": ungated["quotes_checked"], "quotes_exact": ungated["quotes_exact"],
                    "numbers_without_basis": ungated["numbers_without_basis"],
                    "missing_evidence": missing},
    }


async def _ask_all(orchestrator, questions, checker, by_passage, out: Path, say,
                   bar: ProgressBar | None = None, text: CorpusText | None = None) -> list[dict]:
    rows: list[dict] = []
    correct = 0
    bar = bar or ProgressBar(len(questions), "questions")
    try:
        for i, q in enumerate(questions, 1):
            t = time.perf_counter()
            result, trace = await orchestrator.run(q.question)
            latency = (time.perf_counter() - t) * 1000
            rel = Path(result.trace_path).relative_to(out).as_posix() if result.trace_path else None
            rows.append(score(q, result, trace, latency, checker, by_passage, rel, text))
            correct += rows[-1]["correct"]
            bar.update(i, f"{correct} correct")
            if not bar.on and (i % 50 == 0 or i == len(questions)):
                say(f"  {i}/{len(questions)} questions, {correct} correct so far")
    finally:
        bar.close()
    return rows


def run_eval(dataset: Path, profile: Profile, out: Path, limit: int | None = None,
             corpus_dir: "Path | DataDir | None" = None, progress: Callable[[str], None] | None = None,
             leave_out: str | None = None) -> dict:
    """Evaluate one dataset; writes report.json, report.html and questions.jsonl to `out`. With
    `leave_out`, ask only the questions about that law, of the corpus without it."""
    from .html import render_html

    say = progress or (lambda m: log.info(m))
    evalset = load_dataset(dataset, limit)
    questions = evalset.questions
    if leave_out is not None:
        questions = leave_out_questions(evalset, leave_out)
    out.mkdir(parents=True, exist_ok=True)
    shutil.rmtree(out / "traces", ignore_errors=True)  # the report links only this run's traces
    corpus, corpus_info = prepare_corpus(evalset, profile, out, corpus_dir, say, leave_out)
    try:
        orchestrator = corpus.orchestrator(trace_dir=out / "traces")
        by_passage = corpus_dir is None and bool(evalset.passages)
        checker = SourceChecker()
        text = corpus_text(corpus) if any(q.reference for q in questions) else None
        say(f"asking {len(questions)} questions …")
        rows = asyncio.run(_ask_all(orchestrator, questions, checker, by_passage, out, say, text=text))
    finally:
        corpus.close()
    s = profile.settings
    k_values = sorted({1, s.retrieval.context_size, s.retrieval.top_k})
    gated = metrics.gated_metrics(rows, k_values, "gold_passage" if by_passage else "answer_string")
    ungated = metrics.ungated_metrics(rows)
    answerable = sum(q.answerable for q in evalset.questions)
    report = {
        "saksi_version": __version__,
        "created_at": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        "dataset": {"name": evalset.name, "path": evalset.path, "format": evalset.format,
                    "passages": len(evalset.passages), "questions": len(evalset.questions),
                    "answerable": answerable, "unanswerable": len(evalset.questions) - answerable,
                    "skipped": list(evalset.skipped)},
        "limit": limit,
        "profile": s.profile,
        "components": orchestrator.components.names(),
        "corpus": corpus_info,
        "metrics": gated,
        "truthfulness": metrics.truthfulness(rows),
        "receipts": metrics.receipts(rows),
        "leave_out": None if leave_out is None else {
            **metrics.leave_out(rows, leave_out), "dataset_questions": len(evalset.questions),
            "removed_documents": corpus_info.get("removed_documents", []), "data_dir": corpus_info["data_dir"]},
        "ungated": ungated,
        "comparison": metrics.comparison(gated, ungated, rows),
        "gates_changed": metrics.gates_changed(rows),
        "calibration": metrics.calibration(rows),
        "tradeoff": metrics.tradeoff(rows),
        "risk_coverage": metrics.risk_coverage(rows),
        "reliability": metrics.reliability(rows),
        "operating_point": s.confidence.min_supported,
        "contract": {"quote_exactness_100": gated["quote_exactness"] in (None, 1.0),
                     "no_number_without_basis": gated["numbers_without_basis_displayed"] == 0},
        "files": {"report_json": "report.json", "report_html": "report.html", "questions": "questions.jsonl",
                  "traces": "traces/"},
    }
    (out / "report.json").write_text(json.dumps(report, ensure_ascii=False, indent=1), encoding="utf-8")
    with (out / "questions.jsonl").open("w", encoding="utf-8") as f:
        for r in rows:
            f.write(json.dumps(r, ensure_ascii=False) + "\n")
    (out / "report.html").write_text(render_html(report, rows), encoding="utf-8")
    return report
