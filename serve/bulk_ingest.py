"""Bulk ingestion as a Ray Data job: parsing and embedding spread over a cluster, writing in the driver.

Each file is prepared by the same `DocumentPreparer` as `saksi ingest`, so both paths produce
exactly the same chunks and ids. Ray tasks parse files in parallel; an actor pool embeds the
chunks, each actor loading the embedder once. The driver runs the same `Ingestor` loop as
`saksi ingest` over what the pool hands back (`RayPreparation`): it commits the documents one by
one, in input order, and finalises the corpus once. Milvus Lite lets one process own its file
(and the chunk store is a SQLite file), so every write happens in the driver.

Rows, from stage to stage:
  {path}                                     one per changed file
  → {path, chunk_id, text, prepared, error}  one per chunk; `prepared` (the pickled
                                             PreparedDocument) rides on the document's first
                                             row only; a file that cannot be ingested gives one
                                             row with `error` (JSON {path, message}) instead
  → {path, chunk_id, text, prepared, error, vector, weights, cached, embedder}
                                             `vector` a float32 tensor column, `weights` the
                                             sparse lexical weights as JSON ("" without a
                                             sparse lane), `cached` whether the vector came
                                             from the embedding cache, `embedder` its name
The driver reads the rows in order, as each batch is embedded, and regroups them per document.

The data directory's embedding cache (pipeline/index/embedding_cache.py) works as in `saksi
ingest`: an actor embeds only the texts the cache does not hold for its embedder (it reads the cache
where it can see the data directory), the driver stores the vectors the actors computed, and the
report counts `embedded` and `from_cache` as `saksi ingest` does; so a second bulk-ingest of
unchanged text, a rebuild or a rename, embeds nothing.

Submit to a cluster with:  ray job submit --working-dir . -- saksi bulk-ingest corpus/ --concurrency 4
(workers read the files at the paths the driver sees: the job's working directory or a shared
filesystem). Since only the driver writes, the pool may grow past one even with Milvus Lite; the
model lives in the actors, and the driver knows it by the name and dimension they report.
"""
from __future__ import annotations

import asyncio
import functools
import json
import logging
import sys
import pickle
from pathlib import Path
from typing import Callable, Iterator, Sequence

import numpy as np

from pipeline.backends import make_embedder
from pipeline.config import load_profile
from pipeline.corpus import Corpus, DataDir, IngestReport, Ingestor
from pipeline.corpus.ingestor import GivenVectors, IngestMeter, Prepared, SilentMeter
from pipeline.errors import IngestError
from pipeline.index.embedding_cache import EmbeddingCache
from pipeline.ingest.prepare import DocumentPreparer, PreparedDocument
from pipeline.protocols import Embedder
from pipeline.text import embedding_text

from .ray_start import start_or_join

log = logging.getLogger(__name__)

EmbedderFactory = Callable[[], Embedder]

# Ray Data's largest block, here about one batch of rows (a passage's text and vector are a few KiB): by default
# (128 MiB) an actor's output waits until its whole input block is embedded, so the rows of a long document (one
# block out of parsing) reached the driver only when all of it was done, tens of minutes in the statute book, with
# no progress said and nothing kept if the job stopped; small blocks also let the pool share a long document
STREAM_BLOCK_BYTES = 256 * 1024
REMEMBER_EVERY = 32  # vectors the actors computed, stored in the embedding cache this many at a time as they arrive


@functools.lru_cache(maxsize=4)
def _preparer(profile_name: str, data_dir: str) -> DocumentPreparer:
    """One per worker process, built on its first file: Ray reuses worker processes across tasks."""
    return DocumentPreparer(load_profile(profile_name), Path(data_dir))


def parse(row: dict, profile_name: str, data_dir: str) -> list[dict]:
    """A file → one row per chunk, or one error row: a malformed file is reported, not fatal."""
    try:
        prepared = _preparer(profile_name, data_dir).prepare(Path(row["path"]))
    except IngestError as e:
        error = json.dumps({"path": e.path, "message": e.reason}, ensure_ascii=False)
        return [{"path": row["path"], "chunk_id": "", "text": "", "prepared": b"", "error": error}]
    blob = pickle.dumps(prepared, protocol=pickle.HIGHEST_PROTOCOL)
    return [{"path": row["path"], "chunk_id": c.chunk_id, "text": embedding_text(c),
             "prepared": blob if k == 0 else b"", "error": ""} for k, c in enumerate(prepared.chunks)]


class EmbedActor:
    """One actor of the pool: the embedder, loaded once, embeds batch after batch of chunks.

    A chunk whose text the data directory's embedding cache holds (for this embedder) is not
    embedded: its vector comes from the cache, read-only here (`cached` True); the driver, the
    cache's one writer, stores the vectors the actors computed. A worker that cannot see the data
    directory (another node, no shared filesystem) embeds everything."""

    def __init__(self, profile_name: str, embedder_factory: EmbedderFactory | None = None,
                 cache_dir: str | None = None):
        profile = load_profile(profile_name)
        self.sparse = profile.settings.embedder.sparse
        self.embedder = embedder_factory() if embedder_factory else make_embedder(profile)
        self.cache = EmbeddingCache.reader(cache_dir) if cache_dir else None

    def __call__(self, batch: dict[str, np.ndarray]) -> dict[str, np.ndarray | list]:
        n = len(batch["chunk_id"])
        rows = [i for i, cid in enumerate(batch["chunk_id"]) if cid]  # error rows pass through
        texts = [str(batch["text"][i]) for i in rows]
        vectors = np.zeros((n, self.embedder.dim), np.float32)
        weights = [""] * n
        cached = np.zeros(n, dtype=bool)
        have = self.cache.get(self.embedder.name, texts) if self.cache is not None and texts else {}
        for j, (vec, w) in have.items():
            vectors[rows[j]], cached[rows[j]] = vec, True
            if self.sparse:
                weights[rows[j]] = json.dumps(w or {})
        todo = [j for j in range(len(texts)) if j not in have]
        if todo:
            where = [rows[j] for j in todo]
            if self.sparse:  # one pass gives both vectors
                dense, sparse = asyncio.run(self.embedder.embed_passages_hybrid([texts[j] for j in todo]))
                for i, w in zip(where, sparse):
                    weights[i] = json.dumps(w)
            else:
                dense = asyncio.run(self.embedder.embed_passages([texts[j] for j in todo]))
            vectors[where] = dense
        return {"path": batch["path"], "chunk_id": batch["chunk_id"], "text": batch["text"],
                "prepared": batch["prepared"], "error": batch["error"], "vector": vectors, "weights": weights,
                "cached": cached, "embedder": [self.embedder.name] * n}


class _ReportedEmbedder:
    """The embedder as the driver sees it: the name and dimension the actors reported, so the
    driver loads no model (a cluster's head node may have no GPU) unless `finalize` has to embed
    chunks that an interrupted earlier ingest left without vectors."""

    def __init__(self, name: str, dim: int, factory: EmbedderFactory):
        self.name, self.dim, self._factory = name, dim, factory

    @functools.cached_property
    def _model(self) -> Embedder:
        return self._factory()

    async def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        return await self._model.embed_passages(texts)

    async def embed_passages_hybrid(self, texts: Sequence[str]) -> tuple[np.ndarray, list[dict[int, float]]]:
        return await self._model.embed_passages_hybrid(texts)


def _weights(value: str) -> dict[int, float] | None:
    return {int(k): float(v) for k, v in json.loads(value).items()} if value else None


PARSE_CPUS = 0.5  # what a parsing task reserves: parsing is short and mostly waits on the embedding pool


def actor_cpu_share(cluster_cpus: float, concurrency: int) -> float:
    """CPUs each embedding actor reserves: one (Ray then gives it one OpenMP thread), unless the pool would
    leave the parsing tasks no room. A fixed pool that holds every CPU would wait for parsed files forever
    (`--concurrency 2` on a 2-CPU machine did), so the actors then share what is left after one parse task.
    Either way each actor computes on one thread: N actors use N cores."""
    if cluster_cpus <= 0:
        return 1.0
    return min(1.0, max(cluster_cpus - PARSE_CPUS, PARSE_CPUS) / max(concurrency, 1))


class RayPreparation:
    """The Ingestor's documents, parsed by Ray tasks and embedded by an actor pool: each changed
    file's PreparedDocument with its vectors, or the IngestError that skips it, in input order.

    Before the first document it hands the corpus the embedder the actors reported (name and
    dimension), so the dense index opens with the actors' dimension and the driver loads no model;
    when nothing changed, the factory's embedder, so the state still names who wrote the vectors."""

    def __init__(self, corpus: Corpus, profile_name: str, concurrency: int, batch_size: int,
                 embedder_factory: EmbedderFactory | None, say: Callable[[str], None],
                 meter: IngestMeter | None = None):
        self.corpus, self.profile_name, self.say = corpus, profile_name, say
        self.concurrency, self.batch_size, self.embedder_factory = concurrency, batch_size, embedder_factory
        self.meter = meter or SilentMeter()

    def prepared(self, files: Sequence[Path]) -> Iterator[Prepared]:
        reported = False
        if files:
            factory = self.embedder_factory or functools.partial(make_embedder, self.corpus.profile)
            for prepared, rows in self._documents(files):
                first = rows[0]
                if prepared is None:
                    yield IngestError(**json.loads(first["error"]))
                    continue
                if not reported:  # before the first write opens the dense index with this dimension
                    self.corpus.use_embedder(_ReportedEmbedder(str(first["embedder"]), len(first["vector"]), factory))
                    reported = True
                yield (prepared, GivenVectors({r["chunk_id"]: (r["vector"], _weights(r["weights"])) for r in rows},
                                              from_cache=[r["chunk_id"] for r in rows if r["cached"]], metered=True))
        if not reported and self.embedder_factory:
            self.corpus.use_embedder(self.embedder_factory())

    def _documents(self, files: Sequence[Path]) -> Iterator[tuple[PreparedDocument | None, list[dict]]]:
        """Each file's prepared document (None for a file that cannot be ingested, whose one row is its error) and
        its rows, handed over as soon as its last row arrives. Row by row, as the actors' batches arrive, the meter
        hears each vector and the vectors the actors computed go into the embedding cache, `REMEMBER_EVERY` at a
        time: a job stopped in the middle of a long document (UU 11/2020 holds thousands of passages) keeps every
        vector that reached the driver, and a run again embeds only the rest."""
        prepared, rows, fresh = None, [], []
        for row in self._rows(files):
            if row["error"]:
                yield None, [row]
                continue
            if row["prepared"]:  # a document's first row carries the document (input order is kept)
                prepared, rows = pickle.loads(row["prepared"]), []
                self.meter.embedding(prepared.document.doc_id, len(prepared.chunks))
            rows.append(row)
            if not row["cached"]:
                fresh.append(row)
            self.meter.embedded(1)
            whole = len(rows) == len(prepared.chunks)
            if fresh and (whole or len(fresh) >= REMEMBER_EVERY):
                self._remember(fresh)
                fresh = []
            if whole:
                yield prepared, rows

    def _remember(self, rows: list[dict]) -> None:
        """The vectors the actors computed (not those they read from the cache) into the embedding
        cache: the next ingest of the same text, bulk or not, embeds nothing."""
        new = [r for r in rows if not r["cached"]]
        if new:
            sparse = [_weights(r["weights"]) or {} for r in new] if self.corpus.sparse else None
            self.corpus.embedding_cache.put(str(new[0]["embedder"]), [str(r["text"]) for r in new],
                                            np.asarray([r["vector"] for r in new], dtype=np.float32), sparse)

    def _rows(self, files: Sequence[Path]) -> Iterator[dict]:
        """The Ray Data pipeline; yields each file's rows (its chunks, or its one error row), in input order, as the
        actors' batches finish (`STREAM_BLOCK_BYTES`). An actor runs its batches in the order they were given
        (Ray Data lets it run a later one first when the earlier one's input is not yet at hand): the output keeps
        input order, so a batch run early would wait, unstored, for the one before it to reach the driver."""
        import ray

        start_or_join(say=lambda m: print(m, file=sys.stderr))
        context = ray.data.DataContext.get_current()
        context.execution_options.preserve_order = True
        context.target_max_block_size = STREAM_BLOCK_BYTES
        actor_cpus = actor_cpu_share(float(ray.cluster_resources().get("CPU", 0)), self.concurrency)
        self.say(f"preparing {len(files)} files; embedding with a pool of {self.concurrency} actor(s)"
                 + (f" of {actor_cpus:.2f} CPU each (the rest parses)" if actor_cpus < 1 else "") + " …")
        ds = (ray.data.from_items([{"path": str(p)} for p in files])
              .flat_map(parse, fn_kwargs={"profile_name": self.profile_name,
                                          "data_dir": str(self.corpus.data_dir.resolve())}, num_cpus=PARSE_CPUS)
              .map_batches(EmbedActor, fn_constructor_kwargs={"profile_name": self.profile_name,
                                                              "embedder_factory": self.embedder_factory,
                                                              "cache_dir": str(self.corpus.data_dir.resolve())},
                           compute=ray.data.ActorPoolStrategy(size=self.concurrency), batch_size=self.batch_size,
                           num_cpus=actor_cpus,
                           # a remote arg of the actors: Ray 2.60 names no parameter for it, and warns that
                           # such args go in Ray 2.64 (pyproject pins <2.61)
                           allow_out_of_order_execution=False))
        yield from ds.iter_rows()


def bulk_ingest(paths: Sequence[Path], profile_name: str, data_dir: "Path | DataDir", concurrency: int = 1,
                batch_size: int = 64, rebuild: bool = False, progress: Callable[[str], None] | None = None,
                embedder_factory: EmbedderFactory | None = None, meter: IngestMeter | None = None) -> IngestReport:
    """Ingest files and directories like `saksi ingest` (the same Ingestor loop, report and corpus),
    with parsing and embedding on Ray. `embedder_factory` (picklable) replaces the profile's embedder;
    `meter` hears the progress (`IngestBar`: documents, passages, passages/s and the time left).

    Resumable: each document is committed on its own, so a job stopped anywhere (killed, node lost,
    Ctrl-C) is resumed by running it again: committed files are unchanged and skipped, a document
    half-written is written again, and the embedding cache gives back every vector already computed."""
    say = progress or (lambda m: log.info(m))
    target = data_dir if isinstance(data_dir, DataDir) else DataDir(data_dir)  # a collection's, or the root
    with Corpus(target, load_profile(profile_name)) as corpus:
        preparation = RayPreparation(corpus, profile_name, concurrency, batch_size, embedder_factory, say, meter)
        return Ingestor(corpus, say, meter=meter).ingest(paths, rebuild=rebuild, preparation=preparation)


def cluster_cpus() -> float:
    """CPUs of the Ray cluster this process is connected to (0 when Ray is not running)."""
    import ray

    return float(ray.cluster_resources().get("CPU", 0)) if ray.is_initialized() else 0.0


def throughput_line(embedded: int, from_cache: int, seconds: float, cpus: float) -> str:
    """What a bulk-ingest measured: passages the model embedded per second, in all and per CPU core
    of the cluster (the figure docs/capacity.md scales from)."""
    model = embedded - from_cache
    rate = model / seconds if seconds > 0 else 0.0
    per_core = f", {rate / cpus:.2f} per CPU core ({cpus:g} CPUs in the Ray cluster)" if cpus else ""
    return (f"embedded {model} passages with the model in {seconds:.0f} s: {rate:.2f} passages/s{per_core}"
            + (f"; {from_cache} more from the embedding cache" if from_cache else ""))
