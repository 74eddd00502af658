"""Time to the first verified claim against time to the full answer (issue 29), with vLLM's online engine played by
a fake (tests/models/fake_vllm.py: `FakeAsyncEngine` streams a fixed answer a token at a time at a set rate; vLLM
cannot run here) behind the real `VLLMGenerator` (a tiny model's real tokenizer and chat template), the real
orchestrator, gates and release (pipeline/release.py) over the sample corpus (lite profile).

The answer the engine writes has 4 claims, each one quote of the regulations the question is about (every gate can
pass). For each token rate:
- streamed: the orchestrator verifies each claim as it closes; `first_claim_s` is when the first claim was released
  (`emit`), `full_s` when the whole answer was decided;
- whole: the same generator without streaming (its `generate`: the final output only, then every gate), the path
  every generator took before.
Figures are medians of `--repeats` runs; ratios from one run are what to compare (this machine is shared and noisy).

    .venv/bin/python bench/first_claim.py [--rates 20 50 100] [--repeats 3] [--out bench/results/first_claim.json]
"""
from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

QUESTION = "Berapa tarif pajak penghasilan atas persewaan tanah dan bangunan?"
CHARS_PER_TOKEN = 4


class Whole:
    """The generator without its `stream`: the path of a generator that cannot stream (a bench double)."""

    def __init__(self, inner):
        self.inner, self.name = inner, inner.name

    async def generate(self, request):
        return await self.inner.generate(request)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rates", type=float, nargs="+", default=[20, 50, 100], help="tokens per second")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--out", type=Path, default=ROOT / "bench" / "results" / "first_claim.json")
    args = ap.parse_args()

    from pipeline.backends.local_llm import VLLMGenerator
    from pipeline.config import LocalLLMSettings, load_profile
    from pipeline.corpus import Corpus
    from tests.models import tiny
    from tests.models.fake_vllm import FakeAsyncEngine, fake_vllm_modules, quoted_answer

    sys.modules["vllm"], sys.modules["vllm.sampling_params"] = fake_vllm_modules()
    work = Path(tempfile.mkdtemp(prefix="saksi-first-claim-"))
    model_dir = tiny.build_causal_lm(work / "qwen2")
    corpus = Corpus(work / "data", load_profile())
    corpus.ingest([ROOT / "corpus" / "sample"])
    _, trace = asyncio.run(corpus.orchestrator(write_traces=False).run(QUESTION))
    answer = quoted_answer(trace, 4)
    tokens = -(-len(answer) // CHARS_PER_TOKEN)
    rows = []
    for rate in args.rates:
        runs = {"first_claim_s": [], "full_s": [], "whole_full_s": []}
        for _ in range(args.repeats):
            engine = FakeAsyncEngine(text=answer, token_delay=1 / rate, chars_per_token=CHARS_PER_TOKEN)
            gen = VLLMGenerator(LocalLLMSettings(model=str(model_dir), max_tokens=1024),
                                engine_factory=lambda s, p: engine)
            try:
                first: list[float] = []
                started = time.perf_counter()

                def emit(kind, data):
                    if kind == "claim" and not first:
                        first.append(time.perf_counter() - started)
                result, _ = asyncio.run(corpus.orchestrator(generator=gen, write_traces=False).run(QUESTION,
                                                                                                   emit=emit))
                full = time.perf_counter() - started
                shown = sum(c.status == "supported" for c in result.claims)
                assert result.outcome == "answer" and shown == 4 and first, (result.outcome, shown)
                started = time.perf_counter()
                whole, _ = asyncio.run(corpus.orchestrator(generator=Whole(gen), write_traces=False).run(QUESTION))
                whole_full = time.perf_counter() - started
                assert whole.outcome == "answer"
            finally:
                gen.close()
            runs["first_claim_s"].append(first[0])
            runs["full_s"].append(full)
            runs["whole_full_s"].append(whole_full)
        med = {k: round(statistics.median(v), 3) for k, v in runs.items()}
        row = {"tokens_per_s": rate, "answer_tokens": tokens, **med,
               "first_claim_vs_full": round(med["first_claim_s"] / med["full_s"], 3),
               "first_claim_vs_whole_full": round(med["first_claim_s"] / med["whole_full_s"], 3),
               "runs": {k: [round(x, 3) for x in v] for k, v in runs.items()}}
        rows.append(row)
        print(f"{rate:g} tok/s ({tokens} tokens, 4 claims): first claim {med['first_claim_s']:.2f} s, full answer "
              f"{med['full_s']:.2f} s streamed / {med['whole_full_s']:.2f} s whole -> first/full "
              f"{row['first_claim_vs_full']:.0%} (target <= 40%), first/whole {row['first_claim_vs_whole_full']:.0%}")
    corpus.close()
    out = {"bench": "first_claim", "question": QUESTION, "claims": 4, "chars_per_token": CHARS_PER_TOKEN,
           "engine": "FakeAsyncEngine (tests/models/fake_vllm.py), a fake of vLLM's AsyncLLM", "rows": rows,
           "target": "first_claim_vs_full <= 0.40", "passed": all(r["first_claim_vs_full"] <= 0.40 for r in rows)}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(out, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"written {args.out}")


if __name__ == "__main__":
    main()
