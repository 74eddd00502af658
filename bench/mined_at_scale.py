"""Pasal precision among the statute book against a small corpus, on several hundred questions instead of ~100:
questions mined from laws the reader never trained on, asked of their own laws alone and of the whole statute book.

    .venv/bin/python bench/mined_at_scale.py --laws data/laws --statute data:statute-book --out eval-runs/mined \
        [--archive ../shared/data/peraturan/uu.tar.xz] [--n-laws 24] [--min-questions 10] [--seed 0] [--rescore]

Issue 30's target "Pasal precision of shown answers, statute book, no worse than the small corpus" is measured on the
legal_qa dev split: ~100 answers a side, where a difference of three answers is within the noise (95% interval
about -9 to +3 points). This bench asks more questions, of another kind:

- The laws are the *validate* tenth of the statute book's archive (`training.law_part`: the reader's trees were
  never fitted or calibrated on them; `generator.close_items` was chosen on their enumeration questions). Of those
  with at least --min-questions mined questions, --n-laws are drawn (seeded by --seed).
- Their questions are mined as the reader's training mines them (`answer_reader/mining.py`: the patterns ask a
  provision in its own words, without naming the law; one in three in English). The `chapter` pattern is left out
  (any Pasal of a BAB answers it). Each question's gold is its law and the Pasal of its gold passage.
- The small corpus is those laws alone, ingested with `saksi ingest` (their files from --laws, as
  scripts/statute_book.py writes them, else from the archive with a sidecar naming the law); the statute book is the
  collection --statute names (DATA_DIR:COLLECTION). With --embeddings-from (default: the statute collection's own
  cache) the small corpus reuses those vectors.
- With `--archive training-data/pp.tar.xz` (scripts/pp_archive.py: 1,021 Government Regulations of 2010-2023, the
  legal_qa held-out and dev PPs and their amendments left out) the questions are about regulations the statute book
  does not hold: every answer it gives is then from another regulation, which is what a question about a regulation
  missing from the collection meets (`saksi eval --leave-out`, at the scale of hundreds of questions). Such an
  answer is right only where the other regulation says the same; the figures to read are how often it answers and
  at what confidence.
- Both are asked with `saksi eval` (the lite profile, as the README's commands run it) and compared question by
  question (`saksi eval --compare`, pipeline/eval/compare.py).

The questions are mined from each law as enacted, and the statute book holds the laws that amended or revoked some
of them: where its status graph (pipeline/status.py) says a later law ended a question's gold passage, the statute
book refuses it as history or answers from the text in force, and Pasal precision counts both against it. The result
keeps the questions apart by their gold's standing there (`per_gold_standing`) and compares the two corpora on the
questions whose gold is in force (`compare_gold_in_force`); `--rescore` computes the result again from OUT's runs.

Mined questions are easier than people's (they reuse the provision's words), and a question that another law
answers in the same words counts as wrong in the statute book, as legal_qa's do. So the absolute figures are not
legal_qa's; the difference between the two corpora is what this measures. Written: OUT/mined.jsonl (the dataset),
OUT/laws (the laws' files), OUT/small-data, OUT/small and OUT/statute (the two eval runs) and
bench/results/mined_at_scale.json (or --result).
"""
from __future__ import annotations

import argparse
import hashlib
import json
import shutil
import subprocess
import sys
import tarfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

SKIPPED_PATTERNS = ("chapter",)
KINDS = {"uu": ("Undang-Undang", "Dewan Perwakilan Rakyat dan Presiden Republik Indonesia"),
         "pp": ("Peraturan Pemerintah", "Presiden Republik Indonesia")}


def member_file(name: str) -> str:
    """The file scripts/statute_book.py writes for an archive member: "uu/2003/13.md" -> "uu-13-2003.md"."""
    kind, year, number = Path(name).with_suffix("").parts[-3:]
    return f"{kind}-{number}-{year}.md"


def law_files(archive: Path, names: set[str], laws_dir: Path | None, out: Path) -> None:
    """The drawn laws' files into `out`: from --laws where it holds them (with their sidecars), else from the
    archive, with a sidecar of the identity its path states (as scripts/statute_book.py writes one)."""
    out.mkdir(parents=True, exist_ok=True)
    with tarfile.open(archive, "r:*") as tar:
        for m in tar.getmembers():
            if m.name not in names:
                continue
            target = out / member_file(m.name)
            src = laws_dir / target.name if laws_dir is not None else None
            if src is not None and src.is_file():
                shutil.copy2(src, target)
                side = src.with_name(src.name + ".meta.yaml")
                if side.is_file():
                    shutil.copy2(side, target.with_name(target.name + ".meta.yaml"))
                continue
            target.write_bytes(tar.extractfile(m).read())
            kind, year, number = Path(m.name).with_suffix("").parts[-3:]
            doc_type, issuer = KINDS[kind]
            target.with_name(target.name + ".meta.yaml").write_text(
                f"# from the archive's path ({m.name})\ndoc_type: {doc_type}\nissuer: {issuer}\n"
                f"number: \"{number}\"\nyear: {int(year)}\nauthority: official\n", encoding="utf-8")


def mined_laws(archive: Path, min_questions: int) -> list[tuple[object, list]]:
    """The validate tenth's laws with their mined questions (less the skipped patterns), those with enough."""
    from pipeline.answer_reader import training
    from pipeline.answer_reader.mining import mine_law, read_laws
    from pipeline.answer_reader.mining_words import Translator
    from pipeline.config import load_profile
    from pipeline.ingest.chunker import Chunker

    profile = load_profile("lite")
    tr = Translator(profile.glossary, training.query_analyzer(profile).analyzers["id"])
    out = []
    for law in read_laws(archive, Chunker(profile.settings.chunking.max_chars),
                         keep=lambda n: training.law_part(n) == "validate"):
        qs = [q for q in mine_law(law, profile, tr) if q.pattern not in SKIPPED_PATTERNS]
        if len(qs) >= min_questions:
            out.append((law, qs))
    return out


def reference(law, q) -> dict | None:
    """The gold receipt of a mined question: its law and the Pasal (and ayat) of its gold passage."""
    from pipeline.eval.receipts import parse_receipt

    chunk = next(c for c in law.chunks if c.chunk_id == q.chunk_id)
    cite = parse_receipt(f"{cite_name(law.name)} › {chunk.location}", chunk.location)
    if not cite.pasal:
        return None
    ayat = cite.ayat if cite.ayat and cite.ayat.isdigit() else None  # a passage of ayat 8-10 names no one ayat
    return {"law": cite_name(law.name), "pasal": [cite.pasal], "ayat": ayat, "huruf": None}


def cite_name(member: str) -> str:
    """The law's citation name from its archive path, as its sidecar names it ("pp/2015/105.md" -> "PP 105/2015"):
    a scanned heading may not say it ("PP Nomor 105")."""
    kind, year, number = Path(member).with_suffix("").parts[-3:]
    return f"{kind.upper()} {number}/{int(year)}"


def draw(laws: list, n: int, seed: int) -> list:
    """`n` of the laws, in an order seeded by `seed` and each law's name (the same laws give the same draw)."""
    return sorted(laws, key=lambda lq: hashlib.sha256(f"{seed}:{lq[0].name}".encode()).hexdigest())[:n]


def write_dataset(out: Path, drawn: list, archive: Path, laws_dir: Path | None) -> int:
    """OUT/laws (the drawn laws' files and sidecars) and OUT/mined.jsonl; the number of questions."""
    law_files(archive, {law.name for law, _ in drawn}, laws_dir, out / "laws")
    rows = []
    for law, qs in drawn:
        where = {c.chunk_id: c.location for c in law.chunks}
        for q in qs:
            ref = reference(law, q)
            if ref is not None:
                rows.append({"id": q.qid, "question": q.question, "answers": [q.answer], "answerable": True,
                             "corpus": "laws", "reference": ref, "pattern": q.pattern,
                             "gold_location": where[q.chunk_id]})
    (out / "mined.jsonl").write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows),
                                     encoding="utf-8")
    return len(rows)


def saksi(*args: str, log: Path) -> float:
    """Run the CLI as the README does; its output to `log`; the seconds it took."""
    started = time.perf_counter()
    with log.open("w", encoding="utf-8") as f:
        subprocess.run([str(ROOT / ".venv/bin/saksi"), *args], check=True, stdout=f, stderr=subprocess.STDOUT)
    return round(time.perf_counter() - started, 1)


def small_corpus(out: Path, embeddings: Path | None) -> float:
    """The drawn laws alone in OUT/small-data (default collection), reusing the statute book's vectors."""
    data = out / "small-data"
    if embeddings is not None and embeddings.is_file():
        data.mkdir(parents=True, exist_ok=True)
        target = data / "embeddings.sqlite3"  # the root is the collection "default" (corpus/datadir.py)
        if not target.exists():
            shutil.copy2(embeddings, target)
    return saksi("ingest", str(out / "laws"), "--data-dir", str(data), log=out / "small-ingest.log")


def by_kind(rows: dict, key: str) -> dict:
    """Answered and Pasal-right counts per value of a row field (the pattern, the language, the gold's standing), and
    the refusals that show the answer as history (`only_history`)."""
    from pipeline.eval.metrics import _answered, _top_hit

    out: dict[str, dict] = {}
    for r in rows.values():
        d = out.setdefault(str(r.get(key)), {"questions": 0, "answered": 0, "right": 0, "refused_as_history": 0})
        d["questions"] += 1
        if _answered(r):
            d["answered"] += 1
            d["right"] += int(bool(_top_hit(r, "pasal")))
        elif r.get("reason_code") == "only_history":
            d["refused_as_history"] += 1
    return out


def gold_standings(rows: dict, locations: dict[str, str], store_dir: Path, day: str) -> dict[str, str]:
    """Per question: the standing on `day`, in the statute book's status graph, of its gold passage (its law's
    document; the Pasal or the amendment item of the passage's location, read as an answer's own provision is:
    status.dated): "in_force", "ended", "unknown" or "not_yet"; "absent" where the collection holds no document of the
    law or the dataset no location. The questions are mined from each law as enacted: where a later law ended the
    gold, the statute book rightly refuses it as history or answers from the text in force, and Pasal precision counts
    both against it; the figures by standing keep those apart."""
    from pipeline import status
    from pipeline.eval.receipts import law_key
    from pipeline.index.store import ChunkStore

    store = ChunkStore(store_dir, read_only=True)
    try:
        docs = {law_key(d.cite_as): d.doc_id for d, _ in store.documents() if law_key(d.cite_as) is not None}
        gold = {qid: docs.get(law_key(((r.get("receipt") or {}).get("reference") or {}).get("law")))
                for qid, r in rows.items()}
        statuses = store.status_of([d for d in gold.values() if d is not None])  # each document's graph read once
        out = {}
        for qid, doc_id in gold.items():
            where = locations.get(qid)
            if doc_id is None or where is None:
                out[qid] = "absent"
                continue
            out[qid] = status.standing(statuses[doc_id], day, status.pasal_of(where), status.item_of(where)).state
        return out
    finally:
        store.close()


def answer_day(run: Path) -> str:
    """The date a run's answers were given as of (its first trace's), else today."""
    import datetime as dt

    for trace in sorted((run / "traces").glob("*.json"))[:1]:
        day = ((json.loads(trace.read_text(encoding="utf-8")).get("settings") or {}).get("as_of") or {}).get("date")
        if day:
            return day
    return dt.date.today().isoformat()


def result_of(out: Path, drawn: list, n: int, seconds: dict | None, store_dir: Path) -> dict:
    """The two runs in OUT compared: overall, per band of the top claim (precision beside the confidence stated), per
    pattern, per language and per gold standing in the statute book (`store_dir`, its collection), and on the
    questions whose gold is in force there."""
    from pipeline.eval.compare import compare, load_rows
    from pipeline.eval.metrics import receipt_bands

    dataset = out / "mined.jsonl"
    small, statute = load_rows(out / "small"), load_rows(out / "statute")
    rows = {r["id"]: r for r in map(json.loads, dataset.read_text(encoding="utf-8").splitlines())}
    # a dataset written before it kept its gold's location: the same draw gives it where the chunker still mines the
    # question (ids are stable under the same chunking); a question it no longer mines counts as "absent"
    located = {}
    for law, qs in drawn:
        where = {c.chunk_id: c.location for c in law.chunks}
        located.update({q.qid: where[q.chunk_id] for q in qs})
    locations = {qid: r.get("gold_location") or located.get(qid) for qid, r in rows.items()}
    standings = gold_standings(statute, locations, store_dir, answer_day(out / "statute"))
    for run, got in (("small", small), ("statute", statute)):
        for qid, r in got.items():
            r["pattern"] = rows.get(qid, {}).get("pattern")
            r["gold_standing"] = standings.get(qid, "absent")
            trace = out / run / r["trace"] if r.get("trace") else None
            r["lang"] = json.loads(trace.read_text(encoding="utf-8")).get("question_lang") if trace else None
    in_force = {q for q, st in standings.items() if st == "in_force"}
    return {"laws": [cite_name(law.name) for law, _ in drawn], "questions": n, "seconds": seconds,
             "compare": compare(small, statute),
             # calibration: Pasal precision per band of the top claim beside the confidence it stated
             "per_band": {"small": receipt_bands(list(small.values())),
                          "statute": receipt_bands(list(statute.values()))},
             "per_pattern": {"small": by_kind(small, "pattern"), "statute": by_kind(statute, "pattern")},
             "per_language": {"small": by_kind(small, "lang"), "statute": by_kind(statute, "lang")},
             "per_gold_standing": {"small": by_kind(small, "gold_standing"),
                                   "statute": by_kind(statute, "gold_standing")},
             # None where the statute book holds none of the laws (--archive training-data/pp.tar.xz)
             "compare_gold_in_force": compare({q: r for q, r in small.items() if q in in_force},
                                              {q: r for q, r in statute.items() if q in in_force})
             if in_force else None}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--laws", type=Path, default=None, help="the laws' files (scripts/statute_book.py DIR), if any")
    ap.add_argument("--statute", required=True, help="DATA_DIR:COLLECTION of the statute book")
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--archive", type=Path, default=ROOT.parent / "shared/data/peraturan/uu.tar.xz")
    ap.add_argument("--n-laws", type=int, default=24)
    ap.add_argument("--min-questions", type=int, default=10)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--embeddings-from", type=Path, default=None,
                    help="an embeddings.sqlite3 to seed the small corpus's cache (default: the statute collection's)")
    ap.add_argument("--result", type=Path, default=ROOT / "bench/results/mined_at_scale.json")
    ap.add_argument("--rescore", action="store_true",
                    help="compute the result again from OUT's dataset and two runs, asking nothing")
    a = ap.parse_args()
    data_dir, _, collection = a.statute.partition(":")
    collection = collection or "default"
    from pipeline.corpus.datadir import DataDir
    from pipeline.errors import SaksiError

    try:
        store = DataDir(data_dir).collection(collection).root  # the default collection is the data directory itself
    except SaksiError as e:
        print(f"mined_at_scale: {e}", file=sys.stderr)
        return 2
    if not store.is_dir():
        print(f"mined_at_scale: no collection {collection!r} in {data_dir}", file=sys.stderr)
        return 2
    if a.laws is not None and not a.laws.is_dir():
        print(f"mined_at_scale: no laws directory {a.laws} (scripts/statute_book.py writes it)", file=sys.stderr)
        return 2
    if not a.archive.is_file():
        print(f"mined_at_scale: no archive {a.archive}", file=sys.stderr)
        return 2
    dataset = a.out / "mined.jsonl"
    missing = [d for d in (dataset, a.out / "small", a.out / "statute") if a.rescore and not d.exists()]
    if missing:
        print(f"mined_at_scale: --rescore needs an earlier run in {a.out}; missing {missing[0]}", file=sys.stderr)
        return 2
    a.out.mkdir(parents=True, exist_ok=True)
    drawn = draw(mined_laws(a.archive, a.min_questions), a.n_laws, a.seed)
    if a.rescore:
        n = len(dataset.read_text(encoding="utf-8").splitlines())
        previous = json.loads(a.result.read_text(encoding="utf-8")) if a.result.is_file() else {}
        seconds = previous.get("seconds") if previous.get("laws") == [cite_name(law.name) for law, _ in drawn] else None
    else:
        n = write_dataset(a.out, drawn, a.archive, a.laws)
        print(f"{n} questions from {len(drawn)} laws: {', '.join(cite_name(law.name) for law, _ in drawn)}", flush=True)
        cache = a.embeddings_from or store / "embeddings.sqlite3"
        seconds = {"small_ingest": small_corpus(a.out, cache)}
        seconds["small_eval"] = saksi("eval", str(dataset), "--corpus", str(a.out / "small-data"), "--out",
                                      str(a.out / "small"), log=a.out / "small.log")
        seconds["statute_eval"] = saksi("eval", str(dataset), "--corpus", data_dir, "--collection", collection,
                                        "--out", str(a.out / "statute"), log=a.out / "statute.log")
    result = result_of(a.out, drawn, n, seconds, store)
    a.result.parent.mkdir(parents=True, exist_ok=True)
    a.result.write_text(json.dumps(result, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    c = result["compare"]
    print(f"small corpus: {c['a']}\nstatute book: {c['b']}\ndifference: {c['difference']}\npaired: {c['paired']}")
    g = result["compare_gold_in_force"]
    if g is not None:
        print(f"gold in force in the statute book ({g['questions']} questions): small {g['a']['precision']}, "
              f"statute {g['b']['precision']}, difference {g['difference']}")
    print(f"written: {a.result}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
