"""`saksi ask` and `saksi replay`."""
from __future__ import annotations

import asyncio
import json
import sys

from ..config import load_profile
from ..corpus import Corpus
from .options import collection_dir



def cmd_ask(args) -> int:
    from ..rendering import export
    from ..rendering.answer_text import render_text
    from ..responses import result_json

    from ..limits import check_question

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
    with Corpus(collection_dir(args), profile) as corpus:
        orchestrator = corpus.orchestrator()
        result = asyncio.run(orchestrator.answer(args.question, lang=args.lang, as_of=args.as_of))
    if args.export is not None:  # with the trace file's SHA-256, as the audit log records it
        from ..audit import file_hash
        export.write(result, args.export, file_hash(result.trace_path) if result.trace_path else None, args.lang)
        print(f"exported to {args.export} (trace {result.trace_id})", file=sys.stderr)
    if args.json:
        print(json.dumps(result_json(result), ensure_ascii=False, indent=1))
    else:
        print(render_text(result, args.lang))
    return 0


def cmd_replay(args) -> int:
    from ..analysis import query_analyzer
    from ..rendering.answer_text import render_text
    from ..replay import replay
    from ..responses import ReplayResponse
    from ..trace import find_trace, load_trace

    profile = load_profile(args.profile)
    path = find_trace(args.trace, collection_dir(args).root)
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
