"""How the regex-heavy text functions scale with input size, on adversarial inputs.

For every (function, input shape) pair: the time at 10, 30 and 100 KB (min of 3 runs)
and the ratio 100 KB / 10 KB. Linear code gives a ratio near 10; quadratic code near 100.
Measured, not asserted (tests/unit/test_safe_text.py asserts the growth).

    .venv/bin/python bench/regex_scaling.py [--sizes 10,30,100] [--only NAME]
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Callable

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from pipeline.analysis import QueryAnalyzer, build_analyzers  # noqa: E402
from pipeline.config import load_profile  # noqa: E402
from pipeline.ingest.clean import clean_text  # noqa: E402
from pipeline.ingest.metadata import parse_metadata  # noqa: E402
from pipeline.references import extract_references  # noqa: E402
from pipeline.instructions import instruction_spans  # noqa: E402
from pipeline.numbers import extract_figures  # noqa: E402
from pipeline.text import split_sentences  # noqa: E402

# Adversarial shapes: each a unit repeated up to the size (a prefix/suffix where it matters).
SHAPES: dict[str, Callable[[int], str]] = {
    "leading_blanks": lambda n: " " * n + "PERATURAN MENTERI KEUANGAN\n",
    "leading_newlines": lambda n: " \n" * (n // 2) + "x\n",
    "blank_lines_tabs": lambda n: "\t \n" * (n // 3),
    "pasal_ayat": lambda n: ("Pasal 1 ayat (1) " * (n // 17 + 1))[:n],
    "digit_dots": lambda n: ("1." * (n // 2)) + "1",
    "rupiah": lambda n: ("Rp1.000.000 " * (n // 12 + 1))[:n],
    "hyphens": lambda n: "-" * n,
    "spaced_hyphens": lambda n: "- " * (n // 2),
    "xref_chain": lambda n: ("sebagaimana dimaksud dalam Pasal 2 ayat (1) huruf a " * (n // 52 + 1))[:n],
    "abaikan_no_target": lambda n: ("abaikan " + "x" * 50 + " ") * (n // 59 + 1),
    "dots_spaces": lambda n: ". " * (n // 2),
    "structure_lines": lambda n: ("Pasal 1\n(1) Setiap orang wajib.\na. huruf\n- 2 -\n" * (n // 46 + 1))[:n],
    "long_blank_line": lambda n: "Pasal 1\n" + " " * n + "\nx\n",
}


def _query_analyzer() -> QueryAnalyzer:
    profile = load_profile()
    return QueryAnalyzer(build_analyzers(profile.analysis), profile.glossary, profile.normalisation)


def functions() -> dict[str, Callable[[str], object]]:
    qa = _query_analyzer()
    return {
        "metadata.parse_metadata": parse_metadata,
        "clean.clean_text": lambda s: clean_text(s, extracted=True),
        "xrefs.extract_references": extract_references,
        "numbers.extract_figures": extract_figures,
        "text.split_sentences": split_sentences,
        "instructions.instruction_spans": instruction_spans,
        "analysis.normalise+term_groups": lambda s: qa.term_groups(qa.normalise(s), "id"),
    }


def best_of(fn: Callable[[str], object], text: str, repeats: int = 3) -> float:
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn(text)
        best = min(best, time.perf_counter() - t0)
    return best


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="10,30,100", help="sizes in KB, comma-separated")
    ap.add_argument("--only", default="", help="only functions whose name contains this")
    ap.add_argument("--shape", default="", help="only shapes whose name contains this")
    ap.add_argument("--max-seconds", type=float, default=20.0,
                    help="skip larger sizes of a pair once one run takes longer than this")
    args = ap.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    print(f"{'function':34} {'shape':18} " + " ".join(f"{s:>7}KB" for s in sizes) + "   ratio")
    for name, fn in functions().items():
        if args.only not in name:
            continue
        for shape, make in SHAPES.items():
            if args.shape not in shape:
                continue
            times: list[float | None] = []
            for kb in sizes:
                if times and times[-1] is not None and times[-1] > args.max_seconds:
                    times.append(None)
                    continue
                text = make(kb * 1000)
                times.append(best_of(fn, text, 1 if times and (times[-1] or 0) > 1 else 3))
            cells = " ".join(f"{t:9.4f}" if t is not None else f"{'skip':>9}" for t in times)
            ratio = f"{times[-1] / max(times[0], 1e-6):7.1f}" if times[-1] is not None else "      -"
            print(f"{name:34} {shape:18} {cells} {ratio}", flush=True)


if __name__ == "__main__":
    main()
