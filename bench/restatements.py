"""How `definitions.restated` reads a collection's definitions: which documents state one definition
in the same words, and which near-identical ones it keeps apart; and how often one document states a
sentence in several places (`restatements.restates`: such a claim quotes each place).

    .venv/bin/python bench/restatements.py [--data data] [--collection statute-book] [--samples 12]
                                           [--out bench/results/restatements.json]

Every entry of every definitions article (Pasal 1's angka/huruf spans, as the chunk store's
`definitions` index knows them) is read for its definiens (`definitions.definiens`); for each term
that two or more documents define, every pair of documents' definitions is compared. Printed and
written: entries, terms, terms with several definers, pairs, pairs read as restatements (and of
those, word for word once `term_key` has read them), and random samples of the restatements that
are not word for word, and of the pairs kept apart though 95% of their words are alike (the two
places where `restated` could read wrong: a reader checks them by eye). The samples are drawn with
a fixed seed, so a rerun on the same collection prints the same ones.

Sentences stated in several places: every ayat, huruf and angka span of every chunk (a chunk without
spans: each of its lines), cut into sentences and keyed as `term_key` reads them (word for word; the
spelling-slip exceptions of `restated` are not tried here), at least `restatements.MIN_RESTATED_WORDS`
words; a document's sentence written in two or more places (spans or chunks) is counted, apart from
those that refer to a part of their own Pasal (`restatements.own_pasal_reference`) and those written
twice only as items of enumerations (each lead-in says whose it is) or outside a provision (a
preamble, an elucidation, an annex's form): none is one rule stated twice, so none is quoted together (pipeline/backends/lite.py, `_restated_places`); samples of each.

The collection is opened read-only; nothing is embedded or searched.
"""
from __future__ import annotations

import argparse
import json
import random
import re
import sys
from difflib import SequenceMatcher
from itertools import combinations
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from pipeline.restatements import MIN_RESTATED_WORDS, own_pasal_reference  # noqa: E402
from pipeline.corpus.datadir import DataDir  # noqa: E402
from pipeline.errors import UnknownCollectionError  # noqa: E402
from pipeline.definitions import definiens, restated, term_key  # noqa: E402
from pipeline.answer_reader.answers import item_label, without_label  # noqa: E402
from pipeline.index.store import ChunkStore  # noqa: E402
from pipeline.text import split_sentences  # noqa: E402
from pipeline.types import is_provision  # noqa: E402

ALIKE = 0.95  # share of words two definitions have alike, for the near misses shown


def definitions(store: ChunkStore) -> dict[str, dict[str, tuple[str, str]]]:
    """term key -> {doc id: (its definiens, the entry as written)}, the first entry of each document."""
    index = store.definitions()
    chunks = store.get({cid for rows in index.values() for cid, _ in rows})
    out: dict[str, dict[str, tuple[str, str]]] = {}
    for key, rows in index.items():
        for cid, label in rows:
            chunk = chunks.get(cid)
            span = next((s for s in chunk.spans if getattr(s, "label", "") == label), None) if chunk else None
            if span is None:
                continue
            entry = chunk.text[span.start:span.end].strip()
            said = definiens(entry)
            if said:
                out.setdefault(key, {}).setdefault(chunk.doc_id, (said, entry))
    return out


_ITEM_LINE = re.compile(r"^\s*(?:\d{1,3}|[a-z])[.)]\s")


def sentences_in_places(store: ChunkStore) -> dict[tuple[str, str], dict[tuple[str, int], tuple[str, str, bool]]]:
    """(doc id, sentence key) -> {(chunk id, offset in its text): (the innermost span label or line, the sentence as
    written, whether it is an item of an enumeration)}: sentences cut as the reader cuts them (`text.split_sentences`,
    without their label: `answers.without_label`); a sentence in an ayat and in the huruf inside it is one place."""
    out: dict[tuple[str, str], dict[tuple[str, int], tuple[str, str, bool]]] = {}
    for doc, _ in store.documents():
        for chunk in store.doc_chunks(doc.doc_id):
            lines, at = [], 0
            for i, line in enumerate(chunk.text.splitlines(keepends=True)):
                lines.append((f"line {i}", at, line))
                at += len(line)
            units = ([(s.label, s.start, chunk.text[s.start:s.end])
                      for s in sorted(chunk.spans, key=lambda s: s.end - s.start)] if chunk.spans else lines)
            for label, start, text in units:
                # quoted together only as a provision's own sentence (lite.py `_restated_places`), not an item's
                item = (not is_provision(chunk.location, chunk.spans) or item_label(label)
                        or bool(_ITEM_LINE.match(text)))
                for piece in split_sentences(text):
                    cut, sentence = without_label(piece.text)
                    if sentence.endswith(":"):
                        continue  # a lead-in: no candidate on its own
                    key = term_key(sentence)
                    if len(key.split()) >= MIN_RESTATED_WORDS:
                        where = start + piece.start + cut
                        out.setdefault((doc.doc_id, key), {}).setdefault((chunk.chunk_id, where), (label, sentence, item))
    return out


def differences(a: str, b: str) -> list[list]:
    """The words two definientia differ by: [op, words of a, words of b] per difference."""
    wa, wb = a.split(), b.split()
    return [[op, wa[i1:i2], wb[j1:j2]] for op, i1, i2, j1, j2
            in SequenceMatcher(None, wa, wb, autojunk=False).get_opcodes() if op != "equal"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", default="data")
    ap.add_argument("--collection", default="statute-book")
    ap.add_argument("--samples", type=int, default=12)
    ap.add_argument("--out", default=str(ROOT / "bench" / "results" / "restatements.json"))
    args = ap.parse_args()
    try:
        where = DataDir(args.data).existing(args.collection)
    except UnknownCollectionError as e:
        sys.exit(f"restatements: {e}")
    store = ChunkStore(where.root, read_only=True)
    try:
        defined = definitions(store)
        placed = sentences_in_places(store)
    finally:
        store.close()
    several = {k: v for k, v in defined.items() if len(v) >= 2}
    pairs = same = word_for_word = 0
    restated_not_identical, kept_apart = [], []
    for key, docs in several.items():
        for (da, (a, ea)), (db, (b, eb)) in combinations(docs.items(), 2):
            pairs += 1
            if restated(a, b):
                same += 1
                if a == b:
                    word_for_word += 1
                else:
                    restated_not_identical.append({"term": key, "documents": [da, db], "differ": differences(a, b)})
            elif SequenceMatcher(None, a.split(), b.split(), autojunk=False).ratio() >= ALIKE:
                kept_apart.append({"term": key, "documents": [da, db], "differ": differences(a, b)})
    twice = [(doc, places) for (doc, _), places in placed.items() if len(places) >= 2]
    own, items, rules = [], [], []
    for doc, places in twice:
        if own_pasal_reference(next(iter(places.values()))[1]):
            own.append((doc, places))      # means its own Pasal's part in each place
        elif sum(1 for _, _, item in places.values() if not item) < 2:
            items.append((doc, places))    # an item (its lead-in says whose), or no provision's
        else:
            rules.append((doc, places))    # one rule stated twice: quoted together

    def sample(groups: list, k: int) -> list[dict]:
        return [{"document": doc, "places": [p[0] for p in places.values()][:6], "count": len(places),
                 "sentence": next(iter(places.values()))[1][:200]}
                for doc, places in rng.sample(groups, min(k, len(groups)))]
    rng = random.Random(1)
    result = {
        "collection": args.collection,
        "entries": sum(len(v) for v in defined.values()),
        "terms": len(defined),
        "terms_with_several_definers": len(several),
        "pairs": pairs,
        "restated": same,
        "restated_word_for_word": word_for_word,
        "kept_apart_though_alike": len(kept_apart),
        "alike": ALIKE,
        "samples_restated": rng.sample(restated_not_identical, min(args.samples, len(restated_not_identical))),
        "samples_kept_apart": rng.sample(kept_apart, min(args.samples, len(kept_apart))),
        "sentences": len(placed),
        "sentences_in_several_places": len(twice),
        "of_them_referring_into_their_own_pasal": len(own),
        "of_them_items_or_outside_provisions": len(items),
        "rules_stated_in_several_places": len(rules),
        "documents_with_a_rule_stated_twice": len({doc for doc, _ in rules}),
        "samples_stated_in_several_places": sample(rules, args.samples),
        "samples_referring_into_their_own_pasal": sample(own, args.samples // 2),
        "samples_items_or_outside_provisions": sample(items, args.samples // 2),
    }
    print(json.dumps({k: v for k, v in result.items() if not k.startswith("samples")}, indent=1))
    for name in ("samples_restated", "samples_kept_apart"):
        print(name)
        for s in result[name]:
            print(f"  {s['term']!r} {s['documents']}: " + "; ".join(
                f"{op} {' '.join(x)!r} / {' '.join(y)!r}" for op, x, y in s["differ"][:3]))
    for name in ("samples_stated_in_several_places", "samples_referring_into_their_own_pasal",
                 "samples_items_or_outside_provisions"):
        print(name)
        for s in result[name]:
            print(f"  {s['document']} ×{s['count']} {s['places']}: {s['sentence'][:120]!r}")
    Path(args.out).write_text(json.dumps(result, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
