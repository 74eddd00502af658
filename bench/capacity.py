"""A capacity plan from per-stage costs: for a corpus size and a target rate of answers, the GPUs per
model deployment, the CPU replicas, the Milvus memory and the cost per 1,000 answers.

Nothing here is measured when it runs: it multiplies. Each input is either a per-answer amount of
work of saksi's gpu profile (configs/gpu.yaml, configs/serve/gpu.yaml), a figure measured on this
project's machine (the file under bench/results/ named beside it), or a published figure (its source
beside it), and any of them can be changed:

    .venv/bin/python bench/capacity.py --answers-per-s 10 --passages 68332 --gpu h100
    .venv/bin/python bench/capacity.py --answers-per-s 50 --passages 1000000 --gpu l4 --set generator_prefill_factor=0.4

docs/capacity.md shows its output for the scenarios there and says what each input means.
"""
from __future__ import annotations

import argparse
import json
import math
import sys
from dataclasses import dataclass

# -- published figures (⚠ = read on a secondary page that copies the vendor's; check before signing a budget) ---

@dataclass(frozen=True)
class Gpu:
    name: str
    memory_gb: int
    llm_output_tok_s: float      # vLLM, an 8B-class model, high concurrency
    llm_source: str
    encoder_tok_s: float         # an XLM-RoBERTa-large-sized encoder (BGE-M3, bge-reranker-v2-m3), tokens/s
    encoder_source: str
    usd_per_hour: float          # one GPU, on demand
    price_source: str


GPUS = {
    "h100": Gpu("H100 SXM 80GB", 80, 3400,
                "Lambda vllm-benchmark (github.com/LambdaLabsML/vllm-benchmark, benchmark_v0.md): Llama-3.1-8B "
                "FP8, vLLM 0.5.4, ShareGPT, 320 prompts: 3,400 output tok/s on 1×H100 SXM",
                37000 * 4,
                "derived: the L4 figure below ×4 (H100's dense FP16 tensor throughput is ~8× L4's, 989 vs 121 "
                "TFLOPS per NVIDIA's datasheets; ×4 allows for encoders at modest batch not being compute-bound)",
                98.32 / 8, "⚠ AWS p5.48xlarge (8×H100) $98.32/h on demand, as quoted by usage.ai (June 2026 page; AWS "
                           "announced price cuts of up to 45% for P5 in June 2025, so this is likely high) ÷ 8"),
    "a100": Gpu("A100 SXM 80GB", 80, 1518,
                "Lambda vllm-benchmark (same page): Llama-3.1-8B FP8, vLLM 0.5.4: 1,518 output tok/s on 1×A100 SXM",
                37000 * 2.5, "derived: the L4 figure ×2.5 (312 vs 121 dense FP16 TFLOPS, same allowance)",
                21.97 / 8, "⚠ AWS p4d.24xlarge (8×A100 40GB) $21.97/h, as quoted by cloudurable.com (June 2025) ÷ 8"),
    "l40s": Gpu("L40S 48GB", 48, 1207,
                "⚠ MLPerf Inference v5.1, Red Hat submission (vLLM 0.10.0, Llama-3.1-8B FP8, Server scenario): "
                "1,207 tok/s on 1×L40S",
                37000 * 2.5, "derived: the L4 figure ×2.5 (362 vs 121 dense FP16 TFLOPS, same allowance)",
                1.861, "⚠ AWS g6e.xlarge (1×L40S) $1.861/h us-east-1, as listed by devzero.io"),
    "l4": Gpu("L4 24GB", 24, 1207 * 300 / 864,
              "derived: the L40S figure × the ratio of memory bandwidth (300 vs 864 GB/s, NVIDIA datasheets): "
              "decoding is bandwidth-bound; no published vLLM figure for L4 was found",
              37000,
              "derived: Infinity's benchmark page (michaelfeil.eu/infinity, 'Benchmarking details'): text-embeddings-"
              "inference on an L4 embeds 0.54 requests/s of 115,000 tokens of bge-large-en-v1.5 (335M) = ~62,000 "
              "tokens/s; ×0.6 for the 568M-parameter XLM-RoBERTa-large models",
              0.805, "⚠ AWS g6.xlarge (1×L4) $0.805/h us-east-1, as listed by devzero.io"),
}

# -- the work of one answer in the gpu profile, and what this project measured ---------------------------------

DEFAULTS = {
    # what a question asks of each model (configs/gpu.yaml; token counts are estimates from the settings)
    "question_tokens": 40,             # one question (and its rewrite) through BGE-M3
    "rerank_candidates": 30,           # retrieval.top_k fused candidates, each (question, passage) scored
    "passage_tokens": 300,             # a chunk, as the chunker cuts regulations (prose is shorter)
    "generator_input_tokens": 2600,    # instructions + context_size 6 passages + the question
    "generator_output_tokens": 400,    # bench/results/first_claim.json: a 4-claim answer is 397 tokens
    "judge_pairs": 4,                  # a claim (or each of its citations) against its quotes
    "judge_pair_tokens": 250,
    "attempts_per_answer": 1.41,       # legal_qa dev, small corpus: 81 corrective retries of 197 questions (eval)
    # how far published peak figures hold for this workload (assumptions a reader should set from their own runs)
    "generator_prefill_factor": 0.5,   # long prompts, short answers: published output tok/s at ~0.5 (ShareGPT prompts are short)
    "judge_speedup": 3.0,              # mDeBERTa-v3-base (86M backbone) against the large encoders
    "gpu_utilisation": 0.6,            # plan for 60% of peak: headroom for bursts and the autoscaler's delay
    # CPU side (bench/results/serve_stages.json, lite on 2 cores: per answer, ms of one core)
    "ingress_cpu_ms": 20.0,            # orchestrator, gates, trace (served total minus model stages)
    "retriever_cpu_ms": 15.0,          # fusion, store reads, bm25s (bench/results/search_scale.json at the size)
    "cpus_per_replica": 2,             # configs/serve/gpu.yaml: Ingress 1, Retriever 2
    # Milvus
    "embedding_dim": 1024,             # BGE-M3 dense
    "hnsw_memory_factor": 2.0,         # HNSW graph and vectors: 1.5-2x the raw vectors (Zilliz AI FAQ, "memory
                                       # overhead of HNSW or IVF"; Milvus discussion #24956)
    "sparse_kb_per_passage": 1.0,      # BGE-M3 lexical weights (~100 terms × 8 bytes, ×~1.2 index)
    "milvus_replicas": 2,              # query-node replicas for availability
    "milvus_node_memory_gb": 32,
    "milvus_node_usd_per_hour": 0.384,  # ⚠ AWS r6i.xlarge-class (4 vCPU, 32 GB) as commonly listed; set your own
}


def plan(answers_per_s: float, passages: int, gpu_key: str, a: dict, encoder_gpu_key: str | None = None) -> dict:
    """`gpu_key` runs the generator; `encoder_gpu_key` (default the same) the embedder, reranker and judge, as
    serve/k8s.py's two GPU worker groups do (gpu-large for the generator, gpu-small for the rest)."""
    gpu = GPUS[gpu_key]
    enc = GPUS[encoder_gpu_key or gpu_key]
    attempts = a["attempts_per_answer"]
    # tokens per answer through each model
    embed_tok = a["question_tokens"] * attempts
    rerank_tok = a["rerank_candidates"] * (a["passage_tokens"] + a["question_tokens"]) * attempts
    judge_tok = a["judge_pairs"] * a["judge_pair_tokens"]
    gen_out = a["generator_output_tokens"] * attempts
    util = a["gpu_utilisation"]
    per_gpu = {  # answers/s one GPU sustains for each deployment
        "Embedder": enc.encoder_tok_s * util / embed_tok,
        "Reranker": enc.encoder_tok_s * util / rerank_tok,
        "Judge": enc.encoder_tok_s * a["judge_speedup"] * util / judge_tok,
        "Generator": gpu.llm_output_tok_s * a["generator_prefill_factor"] * util / gen_out,
    }
    rows = []
    gpus_total, encoder_gpus, generator_gpus = 0.0, 0.0, 0.0
    for name, cap in per_gpu.items():
        need = answers_per_s / cap
        # small models share a GPU (configs/serve/gpu.yaml gives them fractions); the generator takes whole ones
        gpus = math.ceil(need) if name == "Generator" else math.ceil(need * 4) / 4
        gpus = max(gpus, 1.0 if name == "Generator" else 0.25)
        gpus_total += gpus
        if name == "Generator":
            generator_gpus += gpus
        else:
            encoder_gpus += gpus
        rows.append({"deployment": name, "gpu": (gpu if name == "Generator" else enc).name,
                     "answers_per_s_per_gpu": round(cap, 2), "gpus": gpus})
    cpu = {"Ingress": a["ingress_cpu_ms"], "Retriever": a["retriever_cpu_ms"]}
    cpu_rows = [{"deployment": n, "replicas": max(2, math.ceil(answers_per_s * ms / 1000 / (a["cpus_per_replica"] * util)))}
                for n, ms in cpu.items()]
    raw_gb = passages * a["embedding_dim"] * 4 / 1e9
    milvus_gb = raw_gb * a["hnsw_memory_factor"] + passages * a["sparse_kb_per_passage"] / 1e6
    milvus_nodes = max(1, math.ceil(milvus_gb / (a["milvus_node_memory_gb"] * 0.7))) * a["milvus_replicas"]
    if enc is gpu:  # one pool of GPUs: the encoders' fractions share whole GPUs with each other
        gpu_cost = math.ceil(gpus_total) * gpu.usd_per_hour
    else:
        gpu_cost = generator_gpus * gpu.usd_per_hour + math.ceil(encoder_gpus) * enc.usd_per_hour
    usd_hour = gpu_cost + milvus_nodes * a["milvus_node_usd_per_hour"]
    answers_hour = answers_per_s * 3600
    return {"gpu": gpu.name if enc is gpu else f"{gpu.name} (generator) and {enc.name} (encoders)",
            "answers_per_s": answers_per_s, "passages": passages, "deployments": rows,
            "gpus_total": gpus_total, "gpus_rounded_up": math.ceil(gpus_total), "cpu": cpu_rows,
            "milvus": {"raw_vectors_gb": round(raw_gb, 2), "memory_gb": round(milvus_gb, 2), "nodes": milvus_nodes},
            "usd_per_hour": round(usd_hour, 2), "usd_per_1000_answers": round(usd_hour / answers_hour * 1000, 3),
            "sources": {"llm": gpu.llm_source, "encoder": enc.encoder_source,
                        "price": gpu.price_source if enc is gpu else f"{gpu.price_source}; {enc.price_source}"}}


def markdown(p: dict) -> str:
    lines = [f"**{p['answers_per_s']} answers/s over {p['passages']:,} passages on {p['gpu']}**", "",
             "| deployment | GPU | answers/s one GPU sustains | GPUs |", "|---|---|---|---|"]
    lines += [f"| {r['deployment']} | {r['gpu']} | {r['answers_per_s_per_gpu']} | {r['gpus']} |" for r in p["deployments"]]
    lines += [f"| **all models** | | | **{p['gpus_total']}** |", ""]
    lines += ["CPU replicas: " + ", ".join(f"{r['deployment']} {r['replicas']}" for r in p["cpu"]) + ". "
              f"Milvus: {p['milvus']['raw_vectors_gb']} GB of raw vectors, {p['milvus']['memory_gb']} GB to hold, "
              f"{p['milvus']['nodes']} query node(s). "
              f"Cost: ${p['usd_per_hour']}/h, **${p['usd_per_1000_answers']} per 1,000 answers** at full load."]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--answers-per-s", type=float, required=True)
    ap.add_argument("--passages", type=int, required=True)
    ap.add_argument("--gpu", choices=sorted(GPUS), default="h100", help="the generator's GPU")
    ap.add_argument("--encoder-gpu", choices=sorted(GPUS), help="the embedder's, reranker's and judge's (default: --gpu)")
    ap.add_argument("--set", action="append", default=[], metavar="NAME=VALUE", help="change an input (repeatable)")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    inputs = dict(DEFAULTS)
    for item in args.set:
        name, _, value = item.partition("=")
        if name not in inputs:
            print(f"capacity: no input {name!r}; one of {', '.join(sorted(inputs))}", file=sys.stderr)
            return 2
        try:
            inputs[name] = float(value)
        except ValueError:
            print(f"capacity: {name} must be a number, not {value!r}", file=sys.stderr)
            return 2
    p = plan(args.answers_per_s, args.passages, args.gpu, inputs, args.encoder_gpu)
    print(json.dumps({"inputs": inputs, **p}, indent=1) if args.json else markdown(p))
    return 0


if __name__ == "__main__":
    sys.exit(main())
