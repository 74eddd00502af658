"""The mined bench's laws among their neighbours: a corpus to ask bench/mined_at_scale.py's questions of where the whole
statute book is not embedded (its ~69,000 passages take 3-5 hours on 2 cores; this one, ~21,000, about an hour).

    .venv/bin/python bench/mined_neighbours.py --laws data/laws --out eval-runs/mined-neighbours [--ratio 0.85] \
        [--per-question 8] [--embeddings-from DATA_DIR/embeddings.sqlite3]
    .venv/bin/python bench/mined_at_scale.py --laws data/laws --statute eval-runs/mined-neighbours/data \
        --out eval-runs/mined-nb --result bench/results/mined_neighbours.json

The corpus holds the 24 drawn laws and every law of the archive that
- writes a sentence nearly word for word as the gold answer of one of their mined questions: its lower-case words
  (names and figures left out, as `subjects.template` leaves them) in the same order, at `--ratio` or more of
  difflib's ratio, among the `--per-question` closest such sentences of other laws. These are the laws that compete with the gold passage for the top of the list in the statute book:
  another law's restatement, a template written for another regency or year, the successor of a revoked law; or
- names one of the 24 by number and year (a law that amends, revokes, implements or cites it).

It is chosen by the questions' gold answers, so it is the statute book's hardest neighbours for these questions, not a
sample of it: its figures say what the neighbours that matter do, not what the whole statute book does. Written:
OUT/neighbours.json (each neighbour with why it is one), OUT/laws (the files and sidecars from --laws, as
scripts/statute_book.py writes them) and OUT/data (ingested with `saksi ingest`, the README's command).
"""
from __future__ import annotations

import argparse
import collections
import difflib
import json
import re
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

_WORD = re.compile(r"[^\W\d_]+")
MIN_WORDS = 6  # fewer lower-case words say too little to be one rule (subjects.MIN_SHARED_WORDS)


def fixed_words(text: str) -> list[str]:
    """A sentence's lower-case words, case-folded: what a template keeps (names and figures are its slots)."""
    return [w.casefold() for w in _WORD.findall(text) if not w[:1].isupper()]


def cite_of(file: str) -> str:
    """A law's citation from its file's name, as scripts/statute_book.py names it: "uu-13-2003.md" -> "UU 13/2003"."""
    kind, number, year = Path(file).stem.split("-")
    return f"{kind.upper()} {number}/{year}"


def near_copies(answers: dict[str, str], sentences: list[tuple[str, str]], ratio: float,
                per_question: int) -> dict[str, set[str]]:
    """For each law (the first of each `sentences` pair), the questions (`answers`: id -> "law\tgold answer") one of
    its sentences writes nearly word for word: `fixed_words` in the same order at `ratio` or more, among the
    `per_question` sentences of other laws closest to the answer (ties: by citation, descending), the gold's own
    law left out. An index of each sentence's words keeps the comparison to the sentences sharing a rare word."""
    index: dict[str, set[int]] = collections.defaultdict(set)
    words = [fixed_words(text) for _, text in sentences]
    for i, kb in enumerate(words):
        if len(kb) >= MIN_WORDS:
            for w in set(kb):
                index[w].add(i)
    out: dict[str, set[str]] = collections.defaultdict(set)
    for qid, answer in answers.items():
        law, text = answer.split("\t", 1)
        ka = fixed_words(text)
        if len(ka) < MIN_WORDS:
            continue
        rare = sorted(set(ka), key=lambda w: len(index.get(w, ())))[:4]
        close = []
        for i in set().union(*(index.get(w, set()) for w in rare)):
            other, kb = sentences[i][0], words[i]
            if other == law or len(set(ka) & set(kb)) < 0.6 * max(len(set(ka)), len(set(kb))):
                continue
            r = difflib.SequenceMatcher(None, ka, kb, autojunk=False).ratio()
            if r >= ratio:
                close.append((round(r, 3), cite_of(other), other))
        for _, _, other in sorted(close, reverse=True)[:per_question]:
            out[other].add(qid)
    return dict(out)


def citing(texts: dict[str, str], laws: list[str]) -> dict[str, list[str]]:
    """The laws (of `texts`: name -> text) that name one of `laws` ("UU 6/1989") as "Undang-Undang Nomor 6 Tahun 1989"."""
    pats = {law: re.compile(r"Undang[- ]+[Uu]ndang\s+(?:Republik\s+Indonesia\s+)?Nomor\s+%s\s+Tahun\s+%s\b"
                            % tuple(law.split()[1].split("/"))) for law in laws}
    out: dict[str, list[str]] = {}
    for name, text in texts.items():
        named = [law for law, p in pats.items() if p.search(text)]
        if named:
            out[name] = named
    return out


def main() -> int:
    import mined_at_scale as m

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--laws", type=Path, required=True, help="the laws' files (scripts/statute_book.py DIR)")
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--archive", type=Path, default=ROOT.parent / "shared/data/peraturan/uu.tar.xz")
    ap.add_argument("--ratio", type=float, default=0.85)
    ap.add_argument("--per-question", type=int, default=8,
                    help="the closest sentences of other laws kept per question (a sentence every budget or "
                         "regional-formation law writes would bring in hundreds)")
    ap.add_argument("--n-laws", type=int, default=24)
    ap.add_argument("--min-questions", type=int, default=10)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--embeddings-from", type=Path, default=None,
                    help="an embeddings.sqlite3 to seed OUT/data's cache (the statute book's, or an earlier run's)")
    a = ap.parse_args()
    if not (a.laws / "order.txt").is_file():
        print(f"mined_neighbours: no laws directory {a.laws} (scripts/statute_book.py writes it)", file=sys.stderr)
        return 2
    if not a.archive.is_file():
        print(f"mined_neighbours: no archive {a.archive}", file=sys.stderr)
        return 2
    if a.embeddings_from is not None and not a.embeddings_from.is_file():
        print(f"mined_neighbours: no embedding cache {a.embeddings_from}", file=sys.stderr)
        return 2
    from pipeline.answer_reader.mining import read_laws
    from pipeline.config import load_profile
    from pipeline.ingest.chunker import Chunker
    from pipeline.text import split_sentences

    drawn = m.draw(m.mined_laws(a.archive, a.min_questions), a.n_laws, a.seed)
    own = {m.member_file(law.name) for law, _ in drawn}
    answers = {q.qid: f"{m.member_file(law.name)}\t{q.answer}" for law, qs in drawn for q in qs}
    sentences, texts = [], {}
    for law in read_laws(a.archive, Chunker(load_profile("lite").settings.chunking.max_chars)):
        name = m.member_file(law.name)
        texts[name] = "\n".join(c.text for c in law.chunks)
        sentences += [(name, s.text) for c in law.chunks for s in split_sentences(c.text)]
    copies = near_copies(answers, sentences, a.ratio, a.per_question)
    cites = citing({n: t for n, t in texts.items() if n not in own}, [m.cite_name(law.name) for law, _ in drawn])
    neighbours = sorted((set(copies) | set(cites)) - own)
    a.out.mkdir(parents=True, exist_ok=True)
    (a.out / "neighbours.json").write_text(json.dumps(
        {n: {"near_copies": sorted(copies.get(n, ())), "names": cites.get(n, [])} for n in neighbours},
        indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    laws = a.out / "laws"
    laws.mkdir(exist_ok=True)
    for name in sorted(own | set(neighbours)):
        for f in (name, name + ".meta.yaml"):
            if (a.laws / f).is_file():
                shutil.copy2(a.laws / f, laws / f)
    print(f"{len(own)} laws and {len(neighbours)} neighbours ({len(copies)} with a near copy of a gold answer, "
          f"{len(cites)} naming one of the laws) in {laws}", flush=True)
    cache = a.out / "data" / "embeddings.sqlite3"
    if a.embeddings_from is not None and not cache.exists():
        cache.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(a.embeddings_from, cache)
    seconds = m.saksi("ingest", str(laws), "--data-dir", str(a.out / "data"), log=a.out / "ingest.log")
    print(f"ingested into {a.out / 'data'} in {seconds} s (log: {a.out / 'ingest.log'})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
