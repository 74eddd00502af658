"""What every command shares: the data directory, collection and profile options, and dates as arguments."""
from __future__ import annotations

import argparse
import datetime as dt

from .. import environment
from ..config import DEFAULT_PROFILE
from ..corpus import DEFAULT_COLLECTION, DataDir


def iso_date(text: str) -> dt.date:
    """An argparse type: a calendar date as YYYY-MM-DD, or a usage error naming the form."""
    try:
        return dt.date.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a date {text!r}: use YYYY-MM-DD") from None


def common_options(p: argparse.ArgumentParser, collection: bool = True) -> None:
    p.add_argument("--data-dir", help="corpus directory (default: $SAKSI_DATA_DIR or ./data)")
    if collection:
        p.add_argument("--collection", default=DEFAULT_COLLECTION, metavar="NAME",
                       help="a named corpus in the data directory (default: 'default', the directory itself; "
                            "`ingest --collection NAME` creates one)")
    p.add_argument("--profile", default=DEFAULT_PROFILE, help="configs/<profile>.yaml (default: lite)")
    p.add_argument("-v", "--verbose", action="store_true", help="debug logging on stderr")


def collection_dir(args, create: bool = False) -> DataDir:
    """The data directory of the collection the command names (--collection; ingest creates it)."""
    root = DataDir(environment.data_dir(args.data_dir))
    return root.collection(args.collection) if create else root.existing(args.collection)
