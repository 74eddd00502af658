"""A data directory's layout, and its state file read in one place.

    chunks.sqlite3   canonical chunks and documents (what both lanes are written from): the manifest,
                     cross-references and near-duplicate pairs
    texts/           each document's rendition (its cleaned text), named by content; chunks slice it
    milvus.db        dense lane (Milvus Lite; or a Milvus server: index.milvus_uri / $SAKSI_MILVUS_URI)
    bm25/            lexical lane (bm25s) + its chunk ids and fingerprint (bm25.next/: the next one, while a
                     server's ingest builds it beside the live one)
    state.json       what both lanes were last written from (CorpusState); written last by every ingest
    about.json       the collection's description and example questions (CollectionAbout), for the page
    traces/          one JSON trace per question asked; traces/paragraphs/ the long paragraphs they name, by SHA-256
    uploads/         files sent to POST /v1/ingest, one folder per uploading key
    audit.jsonl      the hash-chained audit log (answers, ingests, deletes, key changes), and audit.head;
                     audit.index.sqlite3 finds an answer's entry by trace id (rebuilt from the log when missing)
    keys.json        API keys (hashes only; pipeline/keys.py)
    embeddings.sqlite3  vectors by (embedder, text): unchanged text is never embedded twice (kept by --rebuild)
    collections/     named collections: each NAME/ is a data directory of its own (chunk store, Milvus,
                     bm25s, traces, uploads), sharing this root's keys and audit log. The root itself is
                     the collection "default", so a data directory from before collections is one.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
from pathlib import Path
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, ValidationError

from .. import environment
from ..config import IndexSettings
from ..errors import CorpusIndexError, UnknownCollectionError
from ..index.store import ChunkStore
from ..ingest.prepare import TEXTS_DIR


MAX_DESCRIPTION = 500
MAX_EXAMPLES = 10


class CorpusState(BaseModel):
    """What both lanes were last written from: the chunk set's fingerprint, and the embedder
    whose vectors the dense lane holds (a reader checks it without loading the model)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    fingerprint: str
    chunks: int
    embedder: str
    dim: int | None = None  # absent in the first releases' state files
    profile: str | None = None


class CollectionAbout(BaseModel):
    """What a collection is, for whoever chooses one on the page: a description and example questions (set with
    `saksi ingest --description/--example`), and whether every document it holds is an illustration (set by every
    ingest's finalize from the documents' `illustrative` flag: the ask page does not preselect such a collection)."""

    model_config = ConfigDict(extra="ignore")

    description: str | None = Field(None, max_length=MAX_DESCRIPTION)
    examples: list[Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=500)]] = Field(
        default_factory=list, max_length=MAX_EXAMPLES)
    illustrative: bool = False


DEFAULT_COLLECTION = "default"
COLLECTIONS_DIR = "collections"
COLLECTION_NAME = re.compile(r"^[a-z0-9][a-z0-9_-]{0,62}$")


class DataDir:
    STATE = "state.json"

    def __init__(self, root: str | Path, home: str | Path | None = None, name: str = DEFAULT_COLLECTION):
        self.root = Path(root)
        self.home = Path(home) if home is not None else self.root  # where keys and the audit log live
        self.name = name                                            # the collection this directory holds

    # -- collections ---------------------------------------------------------------------------

    def collection(self, name: str) -> "DataDir":
        """The data directory of collection `name` ("default": the root itself)."""
        if name == DEFAULT_COLLECTION:
            return DataDir(self.home)
        if not COLLECTION_NAME.match(name or ""):
            raise UnknownCollectionError(f"{name!r} is not a collection name (lowercase letters, digits, '-', '_'; "
                                         "at most 63; starting with a letter or digit)")
        return DataDir(self.home / COLLECTIONS_DIR / name, home=self.home, name=name)

    def collections(self) -> list[str]:
        """The collections this data directory holds: "default", then every named one ever ingested into."""
        folder = self.home / COLLECTIONS_DIR
        named = sorted(p.name for p in folder.iterdir() if p.is_dir() and COLLECTION_NAME.match(p.name)) \
            if folder.is_dir() else []
        return [DEFAULT_COLLECTION, *named]

    def with_corpus(self) -> list[str]:
        """The collections that hold a corpus (an ingest wrote their state): what serving answers from."""
        return [name for name in self.collections() if self.collection(name).exists()]

    def existing(self, name: str) -> "DataDir":
        """The collection's directory, which must exist (only an ingest creates one)."""
        sub = self.collection(name)
        if name != DEFAULT_COLLECTION and not sub.root.is_dir():
            raise UnknownCollectionError(f"no collection {name!r} in {self.home} (collections: "
                                         f"{', '.join(self.collections())}); `saksi ingest --collection {name}` "
                                         "creates it")
        return sub

    @property
    def milvus_collection(self) -> str:
        """The collection's name on a Milvus server (a Milvus Lite file holds one collection anyway)."""
        if self.name == DEFAULT_COLLECTION:
            return "chunks"
        digest = hashlib.sha256(self.name.encode()).hexdigest()[:8]  # "a-b" and "a_b" stay apart
        return f"chunks_{self.name.replace('-', '_')}_{digest}"

    @property
    def state_file(self) -> Path:
        return self.root / self.STATE

    @property
    def bm25(self) -> Path:
        return self.root / "bm25"

    @property
    def texts(self) -> Path:
        return self.root / TEXTS_DIR

    @property
    def traces(self) -> Path:
        return self.root / "traces"

    @property
    def uploads(self) -> Path:
        return self.root / "uploads"

    @property
    def about_file(self) -> Path:
        return self.root / "about.json"

    def about(self) -> CollectionAbout:
        """The collection's description, example questions and whether it is illustrative; a missing or unreadable
        file is an empty description (the page still lists the collection)."""
        try:
            return CollectionAbout.model_validate_json(self.about_file.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return CollectionAbout()

    def write_about(self, **changes) -> CollectionAbout:
        """Change some of the collection's description fields (validated), keeping the others; written atomically."""
        about = CollectionAbout.model_validate({**self.about().model_dump(), **changes})
        self.root.mkdir(parents=True, exist_ok=True)
        tmp = self.about_file.with_name("about.json.tmp")
        tmp.write_text(about.model_dump_json(indent=1) + "\n", encoding="utf-8")
        os.replace(tmp, self.about_file)
        return about

    def milvus_uri(self, settings: IndexSettings) -> str:
        """A Milvus server when one is configured ($SAKSI_MILVUS_URI, then index.milvus_uri), else
        the Milvus Lite file in this directory."""
        return environment.milvus_uri() or settings.milvus_uri or str(self.root / "milvus.db")

    def exists(self) -> bool:
        """Whether a corpus was built here (the state file is written last by every ingest)."""
        return self.state_file.exists()

    def state(self) -> CorpusState | None:
        """The state, or None when no corpus was built here; a state file that cannot be read
        is one clear error, naming the file and the repair."""
        try:
            raw = self.state_file.read_text(encoding="utf-8")
        except FileNotFoundError:
            return None
        except OSError as e:
            raise CorpusIndexError(f"cannot read {self.state_file}: {e}") from None
        try:
            return CorpusState.model_validate(json.loads(raw))
        except (ValueError, ValidationError) as e:
            first = str(e).splitlines()[0] if str(e) else type(e).__name__
            raise CorpusIndexError(f"{self.state_file} is not a corpus state file ({first}); run `saksi ingest` "
                                   f"again to rewrite it, or `--rebuild`") from None

    def state_mtime(self) -> float | None:
        """When the state was last written: a reader reloads when another writer changed it."""
        try:
            return self.state_file.stat().st_mtime
        except OSError:
            return None

    def write_state(self, state: CorpusState) -> None:
        """Atomically: a reader sees the old state or the new one."""
        tmp = self.root / (self.STATE + ".tmp")
        tmp.write_text(json.dumps(state.model_dump(), indent=1))
        os.replace(tmp, self.state_file)

    def clear(self) -> None:
        """Drop the corpus and its indexes (--rebuild); traces and uploads stay."""
        for target in (self.root / ChunkStore.FILENAME, self.root / "milvus.db", self.bm25,
                       self.bm25.with_name(self.bm25.name + ".next"), self.texts, self.state_file):
            if target.is_dir():
                shutil.rmtree(target)
            else:
                target.unlink(missing_ok=True)
