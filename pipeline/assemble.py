"""From an opened corpus and its profile to a ready orchestrator, with in-process components.

The CLI, evaluation, batch jobs and tests build their orchestrator here; the served
application builds the same `Orchestrator` over deployment handles instead (serve/api.py).
"""
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from .analysis import query_analyzer
from .backends import make_generator, make_judge, make_reranker
from .index import StoreChunkSource
from .orchestrator import Components, Orchestrator
from .protocols import Generator, Judge, Reranker

if TYPE_CHECKING:
    from .corpus import Corpus


def build_orchestrator(corpus: "Corpus", generator: Generator | None = None, judge: Judge | None = None,
                       write_traces: bool = True, trace_dir: Path | None = None,
                       reranker: Reranker | None = None) -> Orchestrator:
    """The orchestrator answering from `corpus` (checked first: it refuses indexes that disagree
    with the chunk store). `generator`, `judge` and `reranker` replace the profile's (tests, the
    adversarial suite, `saksi doctor`'s already loaded models); traces go to `trace_dir`, by
    default the data directory's traces/."""
    lexical = corpus.lexical()  # checks the corpus before anything is opened or loaded
    profile = corpus.profile
    analyzer = query_analyzer(profile)
    components = Components.of(
        profile, analyzer, embedder=corpus.embedder, dense=corpus.dense, lexical=lexical,
        chunks=StoreChunkSource(corpus.store), reranker=reranker or make_reranker(profile, analyzer),
        generator=generator or make_generator(profile, analyzer, corpus.embedder), judge=judge or make_judge(profile),
        sparse=corpus.dense if corpus.sparse else None)
    return Orchestrator(profile, components, analyzer, (trace_dir or corpus.trace_dir) if write_traces else None,
                        audit=corpus.audit if write_traces else None)
