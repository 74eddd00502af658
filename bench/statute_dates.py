"""How many of the statute book's laws saksi dates, and from what: the dates `describe` (the ingest's own merge of
the text's reading with the sidecar `scripts/statute_book.py` writes) gives each of the 1,535 laws of
../shared/data/peraturan/uu.tar.xz, without ingesting or embedding anything (about 30 s).

    .venv/bin/python bench/statute_dates.py [--samples 12] [--out bench/results/statute_dates.json]

Counted: laws signed (`published`), promulgated, with an effective date, dated at all (signed or promulgated: a
passage's date and the day a law stands from fall back to its promulgation), and undated; a signature date more
than a year from the law's own year, kept (a misreading the merge should have dropped: 0 expected) and dropped (each
listed). Sampled (fixed seed):
the signature lines of undated laws, so a reader sees what is left unread.
"""
from __future__ import annotations

import argparse
import json
import random
import re
import sys
import tarfile
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))
from pipeline.corpus import CHUNKER_VERSION  # noqa: E402
from pipeline.ingest.metadata import describe, parse_metadata  # noqa: E402
from statute_book import ARCHIVE, law_id, sidecar  # noqa: E402

_SIGNATURE = re.compile(r"(?:Disahkan|DISAHKAN|Diundangkan|DIUNDANGKAN)\b[^\n]{0,90}")


def count(archive: Path, samples: int) -> dict:
    counts = dict.fromkeys(("laws", "signed", "promulgated", "effective", "dated", "undated"), 0)
    off_year: list[dict] = []
    dropped: list[dict] = []  # read from the text, dropped by the merge as off the law's year
    undated: list[dict] = []
    with tarfile.open(archive, "r:xz") as tar:
        for member in tar.getmembers():
            doc_id = law_id(member.name) if member.isfile() else None
            if doc_id is None:
                continue
            text = tar.extractfile(member).read().decode("utf-8", "replace")
            f = describe(Path(f"{doc_id}.md"), text, {}, yaml.safe_load(sidecar(member.name))).fields
            counts["laws"] += 1
            for key, field in (("signed", "published"), ("promulgated", "promulgated"), ("effective", "effective")):
                counts[key] += bool(f[field])
            dated = bool(f["published"] or f["promulgated"])
            counts["dated" if dated else "undated"] += 1
            read = parse_metadata(text)
            for field in ("published", "promulgated"):
                if f[field] and abs(int(str(f[field])[:4]) - int(f["year"])) > 1:
                    off_year.append({"law": doc_id, field: f[field]})
                elif getattr(read, field) and not f[field]:
                    dropped.append({"law": doc_id, field: getattr(read, field)})
            if not dated:
                line = _SIGNATURE.search(text)
                undated.append({"law": doc_id, "signature": " ".join(line[0].split()) if line else None})
    rng = random.Random(30)
    return {"chunker_version": CHUNKER_VERSION, **counts, "off_year": off_year, "dropped_off_year": dropped,
            "undated_without_a_signature_line": sum(1 for u in undated if u["signature"] is None),
            "undated_samples": rng.sample(undated, min(samples, len(undated)))}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--samples", type=int, default=12)
    ap.add_argument("--out", type=Path, default=ROOT / "bench" / "results" / "statute_dates.json")
    args = ap.parse_args()
    if not ARCHIVE.exists():
        print(f"statute_dates: {ARCHIVE} not found (../shared/data/peraturan/uu.tar.xz)", file=sys.stderr)
        return 2
    result = count(ARCHIVE, args.samples)
    args.out.write_text(json.dumps(result, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    print(f"{result['laws']} laws: signed {result['signed']}, promulgated {result['promulgated']}, effective "
          f"{result['effective']}, dated {result['dated']}, undated {result['undated']} "
          f"({result['undated_without_a_signature_line']} without a signature line); "
          f"signature dates off their law's year: {len(result['off_year'])} kept, "
          f"{len(result['dropped_off_year'])} dropped")
    return 0


if __name__ == "__main__":
    sys.exit(main())
