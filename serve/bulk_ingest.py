"""Bulk ingestion as a Ray Data job: parsing and embedding spread over a cluster, writing in the driver.

Each file is prepared by the same `DocumentPreparer` as `saksi ingest`, so both paths produce
exactly the same chunks and ids. Ray tasks parse files in parallel; an actor pool embeds the
chunks, each actor loading the embedder once. The driver then commits the documents one by one,
in input order, and finalises the corpus once: Milvus Lite lets one process own its file (and
the chunk store is a SQLite file), so every write happens in the driver.

Rows, from stage to stage:
  {path}                                     one per changed file
  → {path, chunk_id, text, prepared, error}  one per chunk; `prepared` (the pickled
                                             PreparedDocument) rides on the document's first
                                             row only; a file that cannot be ingested gives one
                                             row with `error` (JSON {path, message}) instead
  → {path, chunk_id, prepared, error, vector, weights, embedder}
                                             `vector` a float32 tensor column, `weights` the
                                             sparse lexical weights as JSON ("" without a
                                             sparse lane), `embedder` its name
The driver reads the rows in order and regroups them per path.

Submit to a cluster with:  ray job submit --working-dir . -- saksi bulk-ingest corpus/ --concurrency 4
(workers read the files at the paths the driver sees: the job's working directory or a shared
filesystem). Since only the driver writes, the pool may grow past one even with Milvus Lite; the
model lives in the actors, and the driver knows it by the name and dimension they report.
"""
from __future__ import annotations

import asyncio
import functools
import itertools
import json
import logging
import pickle
from pathlib import Path
from typing import Callable, Iterator, Sequence

import numpy as np

from pipeline.backends import make_embedder
from pipeline.config import load_profile
from pipeline.corpus import Corpus, IngestReport
from pipeline.errors import IngestError
from pipeline.index import embedding_text
from pipeline.ingest import expand_paths
from pipeline.ingest.prepare import DocumentPreparer
from pipeline.protocols import Embedder

log = logging.getLogger(__name__)

EmbedderFactory = Callable[[], Embedder]


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
    """One actor of the pool: the embedder, loaded once, embeds batch after batch of chunks."""

    def __init__(self, profile_name: str, embedder_factory: EmbedderFactory | None = None):
        profile = load_profile(profile_name)
        self.sparse = profile.settings.embedder.sparse
        self.embedder = embedder_factory() if embedder_factory else make_embedder(profile)

    def __call__(self, batch: dict[str, np.ndarray]) -> dict[str, np.ndarray | list]:
        n = len(batch["chunk_id"])
        rows = [i for i, cid in enumerate(batch["chunk_id"]) if cid]  # error rows pass through
        texts = [str(batch["text"][i]) for i in rows]
        vectors = np.zeros((n, self.embedder.dim), np.float32)
        weights = [""] * n
        if texts:
            if self.sparse:  # one pass gives both vectors
                dense, sparse = asyncio.run(self.embedder.embed_passages_hybrid(texts))
                for i, w in zip(rows, sparse):
                    weights[i] = json.dumps(w)
            else:
                dense = asyncio.run(self.embedder.embed_passages(texts))
            vectors[rows] = dense
        return {"path": batch["path"], "chunk_id": batch["chunk_id"], "prepared": batch["prepared"],
                "error": batch["error"], "vector": vectors, "weights": weights, "embedder": [self.embedder.name] * n}


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


def _prepared_and_embedded(files: list[Path], profile_name: str, data_dir: Path, concurrency: int,
                           batch_size: int, embedder_factory: EmbedderFactory | None,
                           say: Callable[[str], None]) -> Iterator[list[dict]]:
    """The Ray Data pipeline; yields each file's rows (its chunks, or its one error row), in input order."""
    import ray

    if not ray.is_initialized():
        ray.init(include_dashboard=False, log_to_driver=False)
    ray.data.DataContext.get_current().execution_options.preserve_order = True
    say(f"preparing {len(files)} files; embedding with a pool of {concurrency} actor(s) …")
    ds = (ray.data.from_items([{"path": str(p)} for p in files])
          .flat_map(parse, fn_kwargs={"profile_name": profile_name, "data_dir": str(data_dir.resolve())})
          .map_batches(EmbedActor, fn_constructor_kwargs={"profile_name": profile_name,
                                                          "embedder_factory": embedder_factory},
                       compute=ray.data.ActorPoolStrategy(size=concurrency), batch_size=batch_size))
    for _, rows in itertools.groupby(ds.iter_rows(), key=lambda r: r["path"]):
        yield list(rows)


def bulk_ingest(paths: Sequence[Path], profile_name: str, data_dir: Path, concurrency: int = 1,
                batch_size: int = 64, rebuild: bool = False, progress: Callable[[str], None] | None = None,
                embedder_factory: EmbedderFactory | None = None) -> IngestReport:
    """Ingest files and directories like `Corpus.ingest` (same report, same corpus), with parsing
    and embedding on Ray. `embedder_factory` (picklable) replaces the profile's embedder."""
    say = progress or (lambda m: log.info(m))
    profile = load_profile(profile_name)
    data_dir = Path(data_dir)
    with Corpus(data_dir, profile) as corpus:
        if rebuild:
            corpus.clear()
        files, problems = expand_paths([Path(p) for p in paths])
        report = IngestReport(files=len(files), errors=list(problems))

        def skip(e: IngestError) -> None:
            report.errors.append(e)
            say(f"  skipped {e.path}: {e.reason}")

        claimed: dict[str, str] = {}
        changed: list[Path] = []
        for path in files:
            try:
                doc_id = corpus.unchanged(path)
            except IngestError as e:
                skip(e)
                continue
            if doc_id is None:
                changed.append(path)
            else:
                claimed[doc_id] = str(path.resolve())
                report.unchanged.append(str(path.resolve()))
        reported = False
        if changed:
            factory = embedder_factory or functools.partial(make_embedder, profile)
            for rows in _prepared_and_embedded(changed, profile_name, data_dir, concurrency, batch_size,
                                               embedder_factory, say):
                first = rows[0]
                if first["error"]:
                    skip(IngestError(**json.loads(first["error"])))
                    continue
                if not reported:  # before the first write opens the dense index with this dimension
                    corpus.use_embedder(_ReportedEmbedder(str(first["embedder"]), len(first["vector"]), factory))
                    reported = True
                prepared = pickle.loads(first["prepared"])
                try:
                    corpus.claim(prepared.document, claimed)
                except IngestError as e:
                    skip(e)
                    continue
                corpus.commit(prepared, vectors={r["chunk_id"]: (r["vector"], _weights(r["weights"])) for r in rows})
                report.committed(prepared, say)
        if not reported and embedder_factory:  # the corpus records which embedder wrote its vectors
            corpus.use_embedder(embedder_factory())
        corpus.finalize(report, say, force=bool(report.ingested))
        report.total_documents = len(corpus.store.documents())
        report.total_chunks = corpus.store.count()
    return report
