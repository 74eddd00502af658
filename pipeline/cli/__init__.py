"""The `saksi` command line: ingest, corpus, ask, replay, eval, audit, keys, reviews, train, models, doctor, schema.

Exit codes: 0 success (a refusal is a success: it is the answer "no source"), 1 a check
failed (replay differs, nothing could be ingested, an evaluation found the contract broken), 2 bad usage, configuration or
corpus state — always with a message, never a traceback.
"""
from .main import COMMANDS, build_parser, main
from .corpus_commands import print_ingest_report
from .options import collection_dir, common_options

__all__ = ["COMMANDS", "build_parser", "main", "print_ingest_report", "collection_dir", "common_options"]
