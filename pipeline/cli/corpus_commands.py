"""`saksi ingest` and `saksi corpus`: writing and reading a collection."""
from __future__ import annotations

import json
import sys
from pathlib import Path

from ..audit import LOCAL_KEY
from ..config import load_profile
from ..corpus import Corpus
from . import corpus_text
from .options import collection_dir



def cmd_ingest(args) -> int:
    from pydantic import ValidationError

    from ..corpus import Ingestor
    from ..corpus.datadir import CollectionAbout
    from ..progress import IngestBar

    profile = load_profile(args.profile)
    target = collection_dir(args, create=True)
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
        summary, problems = corpus_text.ingest_text(data_dir, report)
        print(summary)
        for line in problems:
            print(line, file=sys.stderr)
    if report.errors and (strict or not (report.ingested or report.unchanged)):
        return 1
    return 0


def cmd_corpus(args) -> int:
    from .. import catalog

    if args.action in ("show", "rm", "release") and not args.doc:
        print(f"saksi: corpus {args.action} needs a document id or citation name", file=sys.stderr)
        return 2
    target = collection_dir(args)
    data_dir = target.root
    with Corpus(target, load_profile(args.profile)) as corpus:
        if not corpus.exists():
            print(f"saksi: no corpus in {data_dir}: run `saksi ingest PATH --data-dir {data_dir}`", file=sys.stderr)
            return 2
        if args.action == "release":
            from ..corpus.ingestor import tombstones

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
            data, text = [r.model_dump(mode="json") for r in rows], corpus_text.listing_text(data_dir, rows)
        elif args.action == "show":
            data = catalog.show(corpus, args.doc, args.on)
            text = corpus_text.document_text(data)
        elif args.action == "status":
            data = catalog.status_edges(corpus, args.doc, args.on)
            text = corpus_text.status_text(data)
        else:
            data = catalog.xrefs(corpus, args.doc, args.status)
            text = corpus_text.xrefs_text(data)
    print(json.dumps(data, ensure_ascii=False, indent=1) if args.json else text)
    return 0
