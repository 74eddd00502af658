"""An opened corpus: a data directory's chunk store and indexes, and the embedder they were written with.

Reading and writing go through it: `Ingestor` (ingestor.py) writes documents into it,
`orchestrator()` answers from it, and `check` refuses to answer
from indexes that disagree with the chunk store. Nothing is opened until it is used, and
reading needs no model: the state file names the embedder and its dimension.
"""
from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Callable, Sequence

from ..audit import LOCAL_KEY, AuditLog
from .. import environment
from ..analysis import query_analyzer
from ..backends import embedder_name, make_embedder, make_generator, make_judge, make_reranker
from ..config import Profile
from ..errors import CorpusIndexError, SaksiError
from ..index import Bm25LexicalIndex, ChunkStore, MilvusDenseIndex, StoreChunkSource
from ..index.embedding_cache import EmbeddingCache
from ..orchestrator import Components, Orchestrator
from ..protocols import Embedder, Generator, Judge, Reranker
from .datadir import CorpusState, DataDir
from .ingestor import IngestReport, Ingestor, Preparation, Upload

CHUNKER_VERSION = 11  # bump when a code change alters chunks, tags, tokens, references or dates for the same input


def rules_fingerprint(profile: Profile) -> str:
    """What chunks, categories and tokens depend on besides the file: a change means re-ingest."""
    rules = {"chunker": CHUNKER_VERSION, "chunking": profile.settings.chunking.model_dump(),
             "categories": profile.categories.model_dump(), "analysis": profile.analysis.model_dump()}
    return hashlib.sha256(json.dumps(rules, sort_keys=True).encode()).hexdigest()[:16]


class Corpus:
    def __init__(self, data_dir: str | Path | DataDir, profile: Profile, embedder: Embedder | None = None):
        self.dir = data_dir if isinstance(data_dir, DataDir) else DataDir(data_dir)
        self.data_dir = self.dir.root
        self.profile = profile
        self.rules = rules_fingerprint(profile)
        self._embedder = embedder
        self._store: ChunkStore | None = None
        self._dense: MilvusDenseIndex | None = None
        self._cache: EmbeddingCache | None = None

    # -- parts, opened on first use ------------------------------------------------------------

    @property
    def embedder(self) -> Embedder:
        if self._embedder is None:
            self._embedder = make_embedder(self.profile)
        return self._embedder

    @property
    def embedder_name(self) -> str:
        return self._embedder.name if self._embedder is not None else embedder_name(self.profile.settings.embedder)

    def use_embedder(self, embedder: Embedder) -> None:
        """Embed with this one (a Serve retriever hands over the Embedder deployment's handle)."""
        self._embedder = embedder

    @property
    def store(self) -> ChunkStore:
        if self._store is None:
            self._store = ChunkStore(self.data_dir)
        return self._store

    @property
    def embedding_cache(self) -> EmbeddingCache:
        """Vectors by (embedder, text): ingest never embeds the same text twice (kept by --rebuild)."""
        if self._cache is None:
            self._cache = EmbeddingCache(self.data_dir)
        return self._cache

    @property
    def dense(self) -> MilvusDenseIndex:
        if self._dense is None:
            self._dense = MilvusDenseIndex(self.milvus_uri, self.vector_dim(), collection=self.dir.milvus_collection,
                                           token=environment.milvus_token(), sparse=self.sparse)
        return self._dense

    def vector_dim(self) -> int:
        """The vectors' dimension: from the corpus's state when no model is loaded (reading needs none)."""
        if self._embedder is None:
            try:
                state = self.dir.state()
            except CorpusIndexError:  # a damaged state file: the model knows its dimension
                state = None
            if state is not None and state.embedder == self.embedder_name and state.dim:
                return state.dim
        return self.embedder.dim

    @property
    def sparse(self) -> bool:
        """Whether the profile adds the sparse lane (BGE-M3 lexical weights in the same collection)."""
        return self.profile.settings.embedder.sparse

    @property
    def milvus_uri(self) -> str:
        return self.dir.milvus_uri(self.profile.settings.index)

    @property
    def trace_dir(self) -> Path:
        return self.dir.traces

    @property
    def audit(self) -> AuditLog:
        """The data directory's one audit log (collections share it), entries marked with this collection."""
        return AuditLog(self.dir.home, collection=self.dir.name)

    def exists(self) -> bool:
        return self.dir.exists()

    def close(self) -> None:
        if self._dense is not None:
            self._dense.close()
            self._dense = None
        if self._store is not None:
            self._store.close()
            self._store = None
        if self._cache is not None:
            self._cache.close()
            self._cache = None

    def __enter__(self) -> "Corpus":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def clear(self) -> None:
        """Drop the corpus and its indexes (--rebuild)."""
        self.close()
        self.dir.clear()

    # -- consistency ---------------------------------------------------------------------------

    def require_embedder(self, state: CorpusState) -> None:
        """The dense lane holds one embedder's vectors: asking or changing it with another is refused."""
        if state.embedder != self.embedder_name:
            raise CorpusIndexError(
                f"{self.data_dir} was embedded with {state.embedder}, but this profile uses {self.embedder_name}; "
                "use the profile that built it (--profile), or re-ingest with --rebuild")

    def consistent(self) -> bool:
        """Both lanes were written from exactly the store's chunks by this embedder (else an ingest
        was interrupted, or the state file is damaged: the next ingest repairs it)."""
        try:
            state = self.dir.state()
        except CorpusIndexError:
            return False
        return (state is not None and state.fingerprint == self.store.fingerprint()
                and self.dense.count() == self.store.count() and state.embedder == self.embedder_name)

    def check(self) -> str:
        """Refuse to answer from indexes that disagree with the chunk store; returns its fingerprint."""
        state = self.dir.state()
        if state is None:
            raise CorpusIndexError(f"no corpus in {self.data_dir}: run `saksi ingest PATH --data-dir {self.data_dir}`")
        self.require_embedder(state)
        fingerprint = self.store.fingerprint()
        if state.fingerprint != fingerprint:
            raise CorpusIndexError(f"the indexes in {self.data_dir} do not match its chunk store (an ingest was "
                                   "interrupted?); run `saksi ingest` again to repair them")
        stale = self.store.stale_documents(self.rules)
        if stale:
            raise CorpusIndexError(
                f"{len(stale)} document(s) in {self.data_dir} were ingested under other chunking, category or "
                f"analysis rules ({', '.join(stale[:3])}{', …' if len(stale) > 3 else ''}); ingest them again "
                "(unchanged files are re-processed automatically) or use --rebuild")
        n = self.store.count()
        if self.dense.count() != n:
            raise CorpusIndexError(f"the dense index in {self.data_dir} holds {self.dense.count()} chunks, the store "
                                   f"{n}; run `saksi ingest` again to repair it")
        return fingerprint

    def lexical(self) -> Bm25LexicalIndex:
        """The checked corpus's lexical lane, refused when it was built from another chunk set."""
        fingerprint = self.check()
        lexical = Bm25LexicalIndex.load(self.dir.bm25)
        if lexical.fingerprint != fingerprint:
            raise CorpusIndexError(f"the lexical index in {self.data_dir} does not match its chunk store; "
                                   "run `saksi ingest` again to repair it")
        return lexical

    # -- the usual ways in ---------------------------------------------------------------------

    def ingest(self, paths: Sequence[Path], rebuild: bool = False,
               progress: Callable[[str], None] | None = None, actor: str = LOCAL_KEY,
               upload: Upload | None = None, preparation: Preparation | None = None) -> IngestReport:
        """`Ingestor(self).ingest(…)`: files and directories in; an IngestReport out."""
        return Ingestor(self, progress, actor, upload).ingest(paths, rebuild=rebuild, preparation=preparation)

    def delete(self, doc_id: str, progress: Callable[[str], None] | None = None, actor: str = LOCAL_KEY) -> bool:
        """`Ingestor(self).delete(…)`: a document out, indexes and references brought along."""
        return Ingestor(self, progress, actor).delete(doc_id)

    def orchestrator(self, generator: Generator | None = None, judge: Judge | None = None,
                     write_traces: bool = True, trace_dir: Path | None = None,
                     reranker: Reranker | None = None) -> Orchestrator:
        """The orchestrator answering from this corpus, with in-process components (the CLI, evaluation, batch
        jobs and tests; the served application builds the same `Orchestrator` over deployment handles). The corpus
        is checked first: it refuses indexes that disagree with the chunk store. `generator`, `judge` and
        `reranker` replace the profile's (tests, the adversarial suite, `saksi doctor`'s already loaded models);
        traces go to `trace_dir`, by default the data directory's traces/."""
        lexical = self.lexical()  # checks the corpus before anything is opened or loaded
        profile = self.profile
        analyzer = query_analyzer(profile)
        components = Components.of(
            profile, analyzer, embedder=self.embedder, dense=self.dense, lexical=lexical,
            chunks=StoreChunkSource(self.store), reranker=reranker or make_reranker(profile, analyzer),
            generator=generator or make_generator(profile, analyzer, self.embedder),
            judge=judge or make_judge(profile), sparse=self.dense if self.sparse else None)
        return Orchestrator(profile, components, analyzer, (trace_dir or self.trace_dir) if write_traces else None,
                            audit=self.audit if write_traces else None)


def check_collections(root: str | Path, profile: Profile,
                      say: Callable[[str], None] | None = None) -> tuple[dict[str, int], dict[str, str]]:
    """Every collection of a data directory that holds a corpus, checked (`Corpus.check`) after completing what an
    interrupted ingest left (`Ingestor.recover`, said through `say`): the healthy ones with their chunk counts, and
    the damaged ones with what is wrong (they are taken out of service; the others serve). An error only when no
    collection can serve: none holds a corpus, or every one is damaged."""
    home = DataDir(root)
    counts: dict[str, int] = {}
    problems: dict[str, str] = {}
    for name in home.with_corpus():
        try:
            with Corpus(home.collection(name), profile) as corpus:
                done = Ingestor(corpus).recover()  # ends with the check
                if done and say is not None:
                    say(f"collection {name!r}: {done}")
                counts[name] = corpus.store.count()
        except SaksiError as e:
            problems[name] = str(e)
        except Exception as e:  # noqa: BLE001 - a damaged index raises what its library raises: one line each
            problems[name] = f"its corpus cannot be opened ({type(e).__name__}: {str(e)[:200]})"
    if problems and not counts:
        raise CorpusIndexError("; ".join(f"{n}: {p}" if len(problems) > 1 else p for n, p in problems.items()))
    if not counts:
        raise CorpusIndexError(f"no corpus in {home.root}: run `saksi ingest PATH --data-dir {home.root}` "
                               "(or with --collection NAME)")
    return counts, problems
