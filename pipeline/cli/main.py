"""`saksi`'s parser and dispatch: every subcommand's arguments (parsers.py) and its handler (*_commands.py)."""
from __future__ import annotations

import argparse
import logging
import os
import sys
from typing import Callable

from .. import __version__
from ..errors import SaksiError
from . import parsers
from .admin_commands import cmd_audit, cmd_keys, cmd_reviews
from .answer_commands import cmd_ask, cmd_replay
from .corpus_commands import cmd_corpus, cmd_ingest
from .eval_commands import cmd_eval
from .model_commands import cmd_doctor, cmd_models, cmd_schema, cmd_train

log = logging.getLogger("saksi")

# a damaged index makes these log whole tracebacks; the CLI reports it in one line (details with -v)
_QUIET_LOGGERS = {"milvus_lite": logging.CRITICAL, "pymilvus": logging.CRITICAL, "grpc._server": logging.CRITICAL,
                  "faiss.loader": logging.WARNING, "bm25s": logging.WARNING, "httpx": logging.WARNING}


def _setup_logging(verbose: bool) -> None:
    logging.basicConfig(level=logging.DEBUG if verbose else logging.WARNING,
                        format="%(levelname)s %(name)s: %(message)s", stream=sys.stderr)
    for name, level in _QUIET_LOGGERS.items():
        logging.getLogger(name).setLevel(logging.DEBUG if verbose else level)


COMMANDS: dict[str, Callable[[argparse.Namespace], int]] = {
    "ingest": cmd_ingest, "corpus": cmd_corpus, "ask": cmd_ask, "replay": cmd_replay, "schema": cmd_schema,
    "eval": cmd_eval, "models": cmd_models, "train": cmd_train, "doctor": cmd_doctor, "audit": cmd_audit,
    "keys": cmd_keys, "reviews": cmd_reviews}


def build_parser(extend: Callable[[argparse._SubParsersAction], None] | None = None) -> argparse.ArgumentParser:
    """The command line; `extend` adds subcommands hosted elsewhere (serve/cli.py adds
    `serve` and `batch`, so this module never imports ray)."""
    parser = argparse.ArgumentParser(prog="saksi", description="Answers with exact quotes from your documents, "
                                                               "or refuses and says what is missing.")
    parser.add_argument("--version", action="version", version=f"saksi {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

    for add in (parsers.add_corpus_commands, parsers.add_answer_commands, parsers.add_eval_command,
                parsers.add_admin_commands, parsers.add_model_commands):
        add(sub)
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
