"""`saksi doctor`: the check a user runs where the real weights are (their GPU machine or cluster node).

First the preflight of `saksi models check` (pipeline/models.py, `check_profile`), plus whether a
GPU is there when the profile needs one (the vLLM generator, or a device set to cuda). If
anything is missing it stops there, before loading anything, and says what (exit 1).

Otherwise it loads every model of the profile through the factories the pipeline itself uses
(`pipeline.backends.make_*`), ingests the sample corpus (corpus/sample) into a data directory of
its own, asks a built-in set of Indonesian and English questions (one unanswerable) through the
in-process orchestrator, and measures:

- generator tokens/s for one request, and for 8 concurrent requests (total output tokens over
  wall time), counted with the generator's own tokenizer, or as characters/4 when it has none;
- the structured-output pass rate: generator outputs that `pipeline.claims.parse_claims` accepts;
- verbatim quotes: the share of parsed claims whose every citation passed the quote gate;
- judge agreement: the same (claim, paragraph) pairs judged in float32 and in the candidate dtype
  (the configured one, or bfloat16 when float32 is configured), on a GPU only;
- peak GPU memory per model (load plus one warm-up call), and over the question run;
- determinism: the same request generated twice gives the same bytes (and, for information,
  the same bytes when generated inside the concurrent batch).

It measures; it does not grade. A report is written as JSON and printed as a table.
"""
from __future__ import annotations

import asyncio
import datetime as dt
import importlib.util
import json
import statistics
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any, Callable

from .. import __version__
from ..config import Profile
from ..errors import ConfigError
from ..models import check_profile

SAMPLE_CORPUS = Path(__file__).resolve().parents[2] / "corpus" / "sample"
MARKER = ".saksi-doctor"  # a data directory doctor made (and may ingest into again)
CONCURRENT = 8

# (question, what the sample corpus should give) — the README's demo questions and their kin
QUESTIONS: tuple[tuple[str, str], ...] = (
    ("Berapa tarif pajak penghasilan atas persewaan tanah dan bangunan?", "answer"),
    ("What is the penalty for filing the SPT Masa late?", "answer"),
    ("Kapan PPh final atas sewa tanah dan bangunan harus disetor?", "answer"),
    ("What is the income tax rate on renting land and buildings?", "answer"),
    ("Kapan pendapatan dari kontrak dengan pelanggan diakui?", "answer"),
    ("Berapa tarif bea masuk untuk impor mobil listrik?", "refusal"),
)

Progress = Callable[[str], None]


# --- preflight: `saksi models check`, and the GPU ------------------------------------------------


def gpu_needs(profile: Profile) -> list[str]:
    """What in the profile cannot run without a CUDA GPU."""
    s = profile.settings
    needs = []
    if s.generator.backend == "vllm":
        needs.append("generator (vllm)")
    for role in ("embedder", "reranker", "judge"):
        device = str(getattr(getattr(s, role), "device", "") or "")
        if device.startswith("cuda"):
            needs.append(f"{role} (device {device})")
    local = s.generator.local
    if s.generator.backend == "transformers" and local is not None and str(local.device).startswith("cuda"):
        needs.append(f"generator (device {local.device})")
    return needs


def gpu_status() -> dict:
    """{available, devices, detail}: what torch sees (torch is imported only if installed)."""
    if importlib.util.find_spec("torch") is None:
        return {"available": False, "devices": [], "detail": "torch is not installed"}
    import torch

    if not torch.cuda.is_available():
        return {"available": False, "devices": [], "detail": "torch sees no CUDA device "
                                                             "(torch.cuda.is_available() is False)"}
    devices = [torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count())]
    return {"available": True, "devices": devices, "detail": f"{len(devices)} CUDA device(s): {', '.join(devices)}"}


def preflight(profile: Profile) -> dict:
    """`check_profile` (what `saksi models check` reports) with a `gpu` entry; `ok` covers both."""
    report = check_profile(profile)
    needs = gpu_needs(profile)
    gpu = gpu_status()
    gpu_ok = gpu["available"] or not needs
    report["gpu"] = {**gpu, "needed_by": needs, "ok": gpu_ok}
    report["ok"] = bool(report["ok"] and gpu_ok)
    return report


def preflight_text(report: dict) -> str:
    """The lines of `saksi models check` (same wording), then the GPU line."""
    lines = [f"profile {report['profile']}:"]
    for m in report["models"]:
        where = f"found at {m['path']}" if m["available"] else f"MISSING — {m['error']}"
        lines.append(f"  {m['role']:<9} {m['backend']:<21} {m['name']}\n            {where}")
    for lib in report["libraries"]:
        state = "installed" if lib["available"] else f"MISSING — {lib['install']}"
        lines.append(f"  library   {lib['module']:<21} needed by {', '.join(lib['needed_by'])}: {state}")
    for note in report["notes"]:
        lines.append(f"  note      {note}")
    gpu = report.get("gpu")
    if gpu is not None:
        if gpu["needed_by"] and not gpu["available"]:
            lines.append(f"  gpu       needed by {', '.join(gpu['needed_by'])}: MISSING — no GPU: {gpu['detail']}")
        else:
            lines.append(f"  gpu       {gpu['detail']}" + ("" if gpu["needed_by"] else " (not needed by this profile)"))
    if report["ok"]:
        lines.append("all available")
    else:
        lines.append("not ready: fetch or install what is marked MISSING")
    return "\n".join(lines)


# --- measuring -----------------------------------------------------------------------------------


class _GpuMemory:
    """Peak torch CUDA memory around a step, or nothing without CUDA."""

    def __init__(self):
        self.torch = None
        if importlib.util.find_spec("torch") is not None:
            import torch

            if torch.cuda.is_available():
                self.torch = torch

    @property
    def cuda(self) -> bool:
        return self.torch is not None

    def start(self) -> dict | None:
        if not self.cuda:
            return None
        t = self.torch
        t.cuda.synchronize()
        t.cuda.reset_peak_memory_stats()
        free, _ = t.cuda.mem_get_info()
        return {"allocated": t.cuda.memory_allocated(), "free": free}

    def stop(self, before: dict | None) -> dict | None:
        if before is None:
            return None
        t = self.torch
        t.cuda.synchronize()
        peak = t.cuda.max_memory_allocated()
        free, total = t.cuda.mem_get_info()
        return {"peak_allocated_bytes": int(peak), "peak_over_baseline_bytes": int(peak - before["allocated"]),
                "device_used_delta_bytes": int(before["free"] - free), "device_total_bytes": int(total)}


def _token_counter(generator) -> tuple[Callable[[str], int], str]:
    tok = getattr(generator, "tokenizer", None)
    if tok is not None and callable(tok):
        def count(text: str) -> int:
            return len(tok(text, add_special_tokens=False)["input_ids"])
        return count, "the generator's tokenizer"
    return (lambda text: round(len(text) / 4)), "characters/4 (the generator exposes no tokenizer)"


def _first_sentence(text: str, limit: int = 300) -> str:
    text = " ".join(text.split())
    for stop in (". ", "; "):
        cut = text.find(stop)
        if 20 <= cut < limit:
            return text[:cut + 1]
    return text[:limit]


def _judge_pairs(attempts: list, questions: list[str]) -> list:
    """(claim, paragraph) pairs for the judge comparison: every claim the run judged, rebuilt as the
    gates build it, plus probes from each question's context (the record's first sentence against
    its paragraph, which should entail it; the question against it, which mostly should not)."""
    from ..types import JudgeInput

    pairs: dict[tuple[str, str], JudgeInput] = {}
    for a, question in zip(attempts, questions):
        for claim in a.claims:
            if claim.verdict is None:
                continue
            premise = "\n\n".join(dict.fromkeys(a.paragraphs.get(c.chunk_id, "") for c in claim.citations))
            if premise.strip():
                pairs.setdefault((claim.text, premise), JudgeInput(claim.text, premise))
        request = a.generator_request
        for item in (request.context if request is not None else ())[:3]:
            premise = a.paragraphs.get(item.chunk_id) or item.text
            for claim in (_first_sentence(item.text), question):
                pairs.setdefault((claim, premise), JudgeInput(claim, premise))
    return list(pairs.values())


async def judge_agreement(profile: Profile, judge, pairs: list) -> dict:
    """The same pairs judged in float32 and in the candidate dtype (the configured one, or bfloat16
    when float32 is configured): the share with the same label, and the largest score difference."""
    from ..backends.nli import NLIJudge

    s = profile.settings.judge
    configured = str(s.dtype)
    candidate_dtype = configured if configured != "float32" else "bfloat16"
    if not pairs:
        return {"status": "no pairs to judge", "agreement": None}
    judges = {}
    for dtype in ("float32", candidate_dtype):
        if dtype == configured and judge is not None:
            judges[dtype] = judge
        else:
            judges[dtype] = NLIJudge(s.model_copy(update={"dtype": dtype}))
    ref = await judges["float32"].judge(pairs)
    cand = await judges[candidate_dtype].judge(pairs)
    same = sum(r.label == c.label for r, c in zip(ref, cand))
    diffs = [abs(r.score - c.score) for r, c in zip(ref, cand) if r.score is not None and c.score is not None]
    return {"status": "measured", "reference": "float32", "candidate": candidate_dtype, "configured": configured,
            "pairs": len(pairs), "same_label": same, "agreement": round(same / len(pairs), 4),
            "max_score_diff": round(max(diffs), 6) if diffs else None,
            "labels_float32": dict(Counter(str(r.label) for r in ref)),
            f"labels_{candidate_dtype}": dict(Counter(str(c.label) for c in cand))}


async def _throughput(generator, requests: list, count: Callable[[str], int]) -> tuple[dict, dict]:
    """(throughput, determinism): one request twice, then CONCURRENT at once."""
    first = requests[0]
    t = time.perf_counter()
    out1 = await generator.generate(first)
    t1 = time.perf_counter() - t
    t = time.perf_counter()
    out2 = await generator.generate(first)
    t2 = time.perf_counter() - t
    tokens1 = count(out1.raw)
    batch = [requests[i % len(requests)] for i in range(CONCURRENT)]
    latencies: list[float] = []

    async def one(request):
        start = time.perf_counter()
        out = await generator.generate(request)
        latencies.append(time.perf_counter() - start)
        return out

    t = time.perf_counter()
    outs = await asyncio.gather(*(one(r) for r in batch))
    wall = time.perf_counter() - t
    tokens = [count(o.raw) for o in outs]
    throughput = {
        "single": {"output_tokens": tokens1, "seconds": round(t1, 4),
                   "tokens_per_s": round(tokens1 / t1, 2) if t1 > 0 else None,
                   "finish_reason": out1.finish_reason},
        "concurrent": {"requests": CONCURRENT, "output_tokens": sum(tokens), "seconds": round(wall, 4),
                       "tokens_per_s": round(sum(tokens) / wall, 2) if wall > 0 else None,
                       "latency_s_p50": round(statistics.median(latencies), 4),
                       "latency_s_max": round(max(latencies), 4)},
    }
    determinism = {"same_bytes_twice": out1.raw.encode("utf-8") == out2.raw.encode("utf-8")
                   and out1.finish_reason == out2.finish_reason,
                   "same_bytes_in_concurrent_batch": outs[0].raw.encode("utf-8") == out1.raw.encode("utf-8"),
                   "bytes": len(out1.raw.encode("utf-8")), "second_run_s": round(t2, 4)}
    return throughput, determinism


def _prepare_dir(data_dir: Path | None) -> tuple[Path, tempfile.TemporaryDirectory | None]:
    if data_dir is None:
        tmp = tempfile.TemporaryDirectory(prefix="saksi-doctor-")
        return Path(tmp.name), tmp
    data_dir = Path(data_dir)
    if data_dir.exists() and any(data_dir.iterdir()) and not (data_dir / MARKER).exists():
        raise ConfigError(f"{data_dir} is not empty and was not made by `saksi doctor`; doctor ingests the sample "
                          "corpus into a directory of its own: give an empty or new --data-dir")
    data_dir.mkdir(parents=True, exist_ok=True)
    (data_dir / MARKER).write_text("made by saksi doctor: the sample corpus and its traces\n", encoding="utf-8")
    return data_dir, None


def run_doctor(profile: Profile, data_dir: Path | None = None, progress: Progress | None = None,
               compare_judge: bool | None = None, corpus_dir: Path = SAMPLE_CORPUS) -> dict:
    """Load, ingest, ask and measure (see the module doc); the JSON report. `compare_judge`: run the
    float32 comparison (None: only on a GPU); `data_dir`: keep the corpus and traces there (else a
    temporary directory, removed at the end)."""
    say = progress or (lambda m: None)
    if not corpus_dir.is_dir():
        raise ConfigError(f"the sample corpus is not at {corpus_dir} (doctor runs from a source checkout or the "
                          "image, which ship corpus/sample)")
    directory, tmp = _prepare_dir(data_dir)
    try:
        return asyncio.run(_run(profile, directory, say, compare_judge, corpus_dir, kept=tmp is None))
    finally:
        if tmp is not None:
            tmp.cleanup()


async def _run(profile: Profile, directory: Path, say: Progress, compare_judge: bool | None, corpus_dir: Path,
               kept: bool) -> dict:
    from ..analysis import query_analyzer
    from ..corpus import Corpus, DataDir, Ingestor

    memory = _GpuMemory()
    gpu = gpu_status()
    report: dict[str, Any] = {
        "saksi_version": __version__, "profile": profile.settings.profile,
        "started_at": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        "gpu": gpu, "data_dir": str(directory) if kept else None}
    analyzer = query_analyzer(profile)
    # 1. every model, through the pipeline's own factories, with one warm-up call each
    models, (embedder, reranker, judge, generator) = await _load_models(profile, analyzer, memory, say)
    report["models"] = models

    # 2. the sample corpus
    say(f"ingesting {corpus_dir} into {directory} …")
    corpus = Corpus(DataDir(directory), profile, embedder=embedder)
    try:
        t = time.perf_counter()
        ingest = await asyncio.to_thread(Ingestor(corpus).ingest, [corpus_dir])  # it runs its own event loop
        report["corpus"] = {"path": str(corpus_dir), "documents": len(ingest.ingested) + len(ingest.unchanged),
                            "chunks": corpus.store.count(), "errors": [str(e) for e in ingest.errors],
                            "seconds": round(time.perf_counter() - t, 2)}
        if not corpus.store.count():
            raise ConfigError(f"nothing could be ingested from {corpus_dir}: {report['corpus']['errors']}")
        orchestrator = corpus.orchestrator(generator=generator, judge=judge, reranker=reranker,
                                           write_traces=kept)

        # 3. the questions
        run_before = memory.start()
        questions, attempts, asked = [], [], []
        for question, expect in QUESTIONS:
            say(f"asking: {question}")
            t = time.perf_counter()
            result, trace = await orchestrator.run(question)
            row_attempts = [a for p in trace.parts for a in p.attempts]
            attempts += row_attempts
            asked += [question] * len(row_attempts)
            questions.append({"question": question, "expected": expect, "outcome": result.outcome,
                              "reason_code": result.reason_code, "seconds": round(time.perf_counter() - t, 3),
                              "attempts": len(row_attempts), "trace_id": trace.trace_id,
                              "claims_shown": sum(1 for c in result.claims if c.status == "supported")})
        report["questions"] = questions

        # 4. structured output and verbatim quotes, over every generator output of the run
        report.update(_output_checks(attempts))

        # 5. throughput and determinism, on the run's own generator requests
        requests = [a.generator_request for a in attempts if a.generator_request is not None]
        count, counted_by = _token_counter(generator)
        if requests:
            say(f"generator throughput: 1 request, then {CONCURRENT} at once …")
            throughput, determinism = await _throughput(generator, requests, count)
            report["throughput"] = {"tokens_counted_by": counted_by, **throughput}
            report["determinism"] = determinism
        else:
            report["throughput"] = {"tokens_counted_by": counted_by, "status": "no generator request (no context)"}
            report["determinism"] = {"same_bytes_twice": None, "status": "no generator request"}
        run_memory = memory.stop(run_before)

        # 6. judge agreement, float32 against the candidate dtype
        report["judge_agreement"] = await _judge_check(profile, judge, attempts, asked, memory, compare_judge, say)

        report["gpu_memory"] = ({role: m["gpu_memory"] for role, m in models.items()} | {"question_run": run_memory}
                                if memory.cuda else "no GPU")
    finally:
        corpus.close()
    report["finished_at"] = dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")
    return report


async def _load_models(profile: Profile, analyzer, memory: "_GpuMemory", say: Progress) -> tuple[dict, tuple]:
    """Every model through the pipeline's own factories, each timed and warmed up once: what each took to load (and
    of the GPU's memory), and the embedder, reranker, judge and generator."""
    from ..backends import make_embedder, make_generator, make_judge, make_reranker
    from ..types import JudgeInput

    models: dict[str, dict] = {}

    async def load(role: str, make: Callable[[], Any], warm: Callable[[Any], Any] | None = None) -> Any:
        say(f"loading the {role} …")
        before = memory.start()
        t = time.perf_counter()
        component = make()
        load_s = time.perf_counter() - t
        if warm is not None:
            await warm(component)
        models[role] = {"name": getattr(component, "name", type(component).__name__), "load_s": round(load_s, 2),
                        "gpu_memory": memory.stop(before) if memory.cuda else "no GPU"}
        return component

    embedder = await load("embedder", lambda: make_embedder(profile),
                          lambda e: e.embed_queries(["tarif pajak penghasilan"]))
    reranker = await load("reranker", lambda: make_reranker(profile, analyzer))
    judge = await load("judge", lambda: make_judge(profile),
                       lambda j: j.judge([JudgeInput("Tarif pajak adalah 10 persen.",
                                                     "Tarif pajak penghasilan adalah 10 persen dari sewa.")]))
    generator = await load("generator", lambda: make_generator(profile, analyzer))
    return models, (embedder, reranker, judge, generator)


def _output_checks(attempts) -> dict:
    """Structured output (does every generator output parse, whole?) and verbatim quotes (is every citation exact?).
    An output cut after complete claims (their claims stand) still counts as a failure of the structured output."""
    from ..claims import ParseFailure, parse_claims

    outputs = [a.generator_output for a in attempts if a.generator_output is not None]
    failures: Counter = Counter()
    for out in outputs:
        try:
            cut = parse_claims(out.raw, out.finish_reason).cut
        except ParseFailure as e:
            cut = e
        if cut is not None:
            failures[cut.reason] += 1
    passed = len(outputs) - sum(failures.values())
    claims = [c for a in attempts for c in a.claims]
    citations = [x for c in claims for x in c.citations]
    verbatim = sum(1 for c in claims if c.citations and all(x.ok for x in c.citations))
    return {
        "structured_output": {
            "outputs": len(outputs), "parsed": passed,
            "pass_rate": round(passed / len(outputs), 4) if outputs else None,
            "failures": dict(failures),
            "generator_failed": sum(1 for a in attempts if a.failure == "generator_failed")},
        "quotes": {
            "claims": len(claims), "claims_verbatim": verbatim,
            "share_verbatim": round(verbatim / len(claims), 4) if claims else None,
            "citations": len(citations), "citations_verbatim": sum(1 for x in citations if x.ok),
            "citation_failures": dict(Counter(x.reason for x in citations if not x.ok))}}


async def _judge_check(profile: Profile, judge, attempts, asked, memory: "_GpuMemory", compare_judge: bool | None,
                       say: Progress) -> dict:
    """The NLI judge in float32 against the candidate dtype on the run's own claims, where it applies."""
    if profile.settings.judge.backend != "nli":
        return {"status": f"not applicable: judge backend {profile.settings.judge.backend!r} has no dtype",
                "agreement": None}
    if not (memory.cuda if compare_judge is None else compare_judge):
        return {"status": "skipped: no GPU (the judge runs in float32 on CPU)", "agreement": None}
    say("judge: float32 against the candidate dtype …")
    return await judge_agreement(profile, judge, _judge_pairs(attempts, asked))


# --- output --------------------------------------------------------------------------------------


def _gib(n: int | None) -> str:
    return "-" if n is None else f"{n / 2**30:.2f} GiB"


def _fmt(v) -> str:
    if v is None:
        return "n/a"
    if isinstance(v, float):
        return f"{v:.3f}" if v < 100 else f"{v:.1f}"
    return str(v)


def doctor_text(report: dict) -> str:
    """The table `saksi doctor` prints: one section per measurement."""
    rows: list[tuple[str, str, str]] = []
    add = rows.append
    add(("gpu", "", report["gpu"]["detail"]))
    for role, m in report["models"].items():
        mem = m["gpu_memory"]
        mem_text = mem if isinstance(mem, str) else f"peak {_gib(mem['peak_over_baseline_bytes'])} over baseline"
        add(("models", role, f"{m['name']}: loaded in {m['load_s']} s; {mem_text}"))
    c = report["corpus"]
    add(("corpus", "sample", f"{c['documents']} documents, {c['chunks']} chunks in {c['seconds']} s"
                             + (f"; {len(c['errors'])} error(s)" if c["errors"] else "")))
    for q in report["questions"]:
        add(("questions", q["outcome"] + (f" ({q['reason_code']})" if q["reason_code"] else ""),
             f"{q['question']}  [{q['seconds']} s, expected {q['expected']}]"))
    t = report["throughput"]
    if "single" in t:
        add(("throughput", "1 request", f"{_fmt(t['single']['tokens_per_s'])} tokens/s "
                                        f"({t['single']['output_tokens']} tokens in {t['single']['seconds']} s)"))
        k = t["concurrent"]
        add(("throughput", f"{k['requests']} concurrent", f"{_fmt(k['tokens_per_s'])} tokens/s "
                                                          f"({k['output_tokens']} tokens in {k['seconds']} s; "
                                                          f"latency p50 {k['latency_s_p50']} s, max "
                                                          f"{k['latency_s_max']} s)"))
        add(("throughput", "counted by", t["tokens_counted_by"]))
    else:
        add(("throughput", "", t["status"]))
    s = report["structured_output"]
    add(("structured output", "pass rate", f"{_fmt(s['pass_rate'])} ({s['parsed']}/{s['outputs']} parse)"
                                           + (f"; failures {s['failures']}" if s["failures"] else "")))
    q = report["quotes"]
    add(("verbatim quotes", "claims", f"{_fmt(q['share_verbatim'])} ({q['claims_verbatim']}/{q['claims']} claims "
                                      f"with every quote verbatim; {q['citations_verbatim']}/{q['citations']} "
                                      "citations)"))
    j = report["judge_agreement"]
    if j.get("agreement") is None:
        add(("judge agreement", "", j["status"]))
    else:
        add(("judge agreement", f"{j['candidate']} vs float32",
             f"{_fmt(j['agreement'])} same label ({j['same_label']}/{j['pairs']} pairs; max score diff "
             f"{_fmt(j['max_score_diff'])})"))
    mem = report["gpu_memory"]
    if isinstance(mem, str):
        add(("gpu memory", "", mem))
    else:
        for role, m in mem.items():
            add(("gpu memory", role, "n/a" if m is None else
                 f"peak {_gib(m['peak_allocated_bytes'])} allocated by torch here "
                 f"(+{_gib(m['peak_over_baseline_bytes'])}); device use +{_gib(m['device_used_delta_bytes'])}"))
    d = report["determinism"]
    add(("determinism", "same bytes twice", _fmt(d.get("same_bytes_twice"))
         + (f"; in the concurrent batch: {d['same_bytes_in_concurrent_batch']}"
            if "same_bytes_in_concurrent_batch" in d else "")))
    w1 = max(len(r[0]) for r in rows)
    w2 = max(len(r[1]) for r in rows)
    lines = [f"saksi doctor — profile {report['profile']}"]
    last = None
    for section, key, value in rows:
        lines.append(f"  {section if section != last else '':<{w1}}  {key:<{w2}}  {value}")
        last = section
    return "\n".join(lines)


def write_report(report: dict, path: Path) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(report, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    return path
