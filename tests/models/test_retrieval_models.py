"""BGE-M3 (dense + sparse), sentence-transformers and the cross-encoder reranker on tiny
random-init models, loaded through the factories users run; and a whole corpus and
question on them, so the sparse lane and the rerank blend are seen end to end."""
from __future__ import annotations

import asyncio

import numpy as np
import pytest

from pipeline.analysis import QueryAnalyzer, build_analyzers
from pipeline.backends import embedder_name, make_embedder, make_judge, make_reranker
from pipeline.config import EmbedderSettings, JudgeSettings, RerankerSettings, load_profile
from pipeline.corpus import Corpus
from pipeline.errors import CorpusIndexError
from pipeline.index import MilvusDenseIndex
from pipeline.protocols import SparseEmbedder
from pipeline.types import Candidate, Chunk, QueryPlan

from ..conftest import SAMPLE


def _with(profile, **parts):
    return profile.model_copy(update={"settings": profile.settings.model_copy(update=parts)})


@pytest.fixture(scope="module")
def m3_profile(bge_m3_dir):
    return _with(load_profile(), embedder=EmbedderSettings(backend="bge-m3", model=str(bge_m3_dir), sparse=True,
                                                           batch_size=4, max_length=64))


def test_bge_m3_gives_normalised_dense_vectors_and_sparse_weights(m3_profile):
    emb = make_embedder(m3_profile)
    assert isinstance(emb, SparseEmbedder) and emb.name == embedder_name(m3_profile.settings.embedder)
    texts = ["tarif pajak penghasilan 10 persen", "sewa tanah dan bangunan", "laporan keuangan entitas"]
    dense, sparse = asyncio.run(emb.embed_passages_hybrid(texts))
    assert dense.shape == (3, emb.dim) and dense.dtype == np.float32
    assert np.allclose(np.linalg.norm(dense, axis=1), 1.0, atol=1e-5)
    assert len(sparse) == 3 and all(w and all(isinstance(k, int) and v > 0 for k, v in w.items()) for w in sparse)
    # one pass or two: the same dense vectors, in input order (FlagEmbedding sorts by length inside)
    assert np.allclose(asyncio.run(emb.embed_passages(texts)), dense, atol=1e-5)
    assert np.allclose(asyncio.run(emb.embed_queries(texts[1:2]))[0], dense[1], atol=1e-5)
    # a question is read from its first query_max_tokens tokens; a passage up to max_length
    long = " ".join(["tarif pajak penghasilan sewa tanah bangunan"] * 12)
    assert len(emb._model.tokenizer(long)["input_ids"]) > 64
    capped = make_embedder(_with(m3_profile, embedder=m3_profile.settings.embedder.model_copy(
        update={"query_max_tokens": 16})))
    ids = emb._model.tokenizer(long, add_special_tokens=False)["input_ids"][:14]  # 16 with <s> and </s>
    head = emb._model.tokenizer.decode(ids)
    assert np.allclose(asyncio.run(capped.embed_queries([long]))[0], asyncio.run(emb.embed_queries([head]))[0],
                       atol=1e-5)
    assert not np.allclose(asyncio.run(capped.embed_queries([long]))[0], asyncio.run(emb.embed_queries([long]))[0])
    assert np.allclose(asyncio.run(capped.embed_passages([long])), asyncio.run(emb.embed_passages([long])), atol=1e-5)
    # the sparse keys are the tokenizer's ids of the text's words (special tokens left out)
    ids = set(emb._model.tokenizer(texts[1], add_special_tokens=False)["input_ids"])
    assert set(sparse[1]) <= ids


def test_a_sentence_transformers_model_from_a_local_path(bge_m3_dir):
    s = EmbedderSettings(backend="sentence-transformers", model=str(bge_m3_dir), query_prefix="apa ",  # (words the tiny vocabulary knows)
                         passage_prefix="aset ", max_length=64)
    emb = make_embedder(_with(load_profile(), embedder=s))
    assert emb.name == embedder_name(s) and not isinstance(emb, SparseEmbedder)
    q = asyncio.run(emb.embed_queries(["tarif pajak"]))
    p = asyncio.run(emb.embed_passages(["tarif pajak"]))
    assert q.shape == (1, emb.dim) and np.allclose(np.linalg.norm(q, axis=1), 1.0, atol=1e-5)
    assert not np.allclose(q, p)  # the prefixes reach the model
    long = " ".join(["tarif pajak"] * 40)
    capped = make_embedder(_with(load_profile(), embedder=s.model_copy(update={"query_max_tokens": 12})))
    short = capped._model.tokenizer.decode(capped._model.tokenizer("apa " + long, add_special_tokens=False)
                                           ["input_ids"][:10])  # 12 with the two special tokens
    assert np.allclose(asyncio.run(capped.embed_queries([long])), emb._encode([short], "", 64), atol=1e-5)
    assert np.allclose(asyncio.run(capped.embed_passages([long])), asyncio.run(emb.embed_passages([long])), atol=1e-5)


def _chunk(cid: str, text: str, authority="unknown", published=None) -> Chunk:
    return Chunk(chunk_id=cid, doc_id=f"doc-{cid}", title=f"Dokumen {cid}", location="Pasal 1", text=text, lang="id",
                 unit="pasal", ordinal=0, start=0, end=len(text), authority=authority, published=published)


def _plan(text: str) -> QueryPlan:
    return QueryPlan(text=text, normalised=text, lang="id", dense_text=text, lexical_tokens=tuple(text.split()),
                     terms=())


@pytest.fixture(scope="module")
def reranker(cross_encoder_dir):
    p = load_profile()
    analyzer = QueryAnalyzer(build_analyzers(p.analysis), p.glossary, p.normalisation)
    s = RerankerSettings(backend="cross-encoder", model=str(cross_encoder_dir), max_length=64,
                         weights={"cross_encoder": 0.8, "fused": 0.2})
    return make_reranker(_with(p, reranker=s), analyzer)


def test_cross_encoder_scores_are_normalised_and_the_blend_is_recorded(reranker):
    cands = [Candidate(_chunk("a", "tarif pajak penghasilan 10 persen"), rrf_score=1 / 61),
             Candidate(_chunk("b", "sewa tanah dan bangunan"), rrf_score=1 / 62)]
    out = asyncio.run(reranker.rerank(_plan("berapa tarif pajak"), cands, 0.1, 0.05))
    assert reranker.name.startswith("cross-encoder/")
    for c in out:
        comp = c.rerank_components
        assert 0.0 <= comp["cross_encoder"] <= 1.0
        weights = {k[2:]: v for k, v in comp.items() if k.startswith("w_")}
        assert set(weights) == {"cross_encoder", "fused", "authority", "freshness"}
        assert abs(sum(weights.values()) - 1.0) < 1e-5
        assert c.rerank_score == pytest.approx(sum(w * comp[k] for k, w in weights.items()), abs=1e-5)
    assert [c.rerank_score for c in out] == sorted((c.rerank_score for c in out), reverse=True)


def test_a_batch_of_questions_is_scored_in_one_pass_as_each_alone(reranker, monkeypatch):
    """The served Reranker hands concurrent questions over together (`rerank_batch`): every pair
    goes through the model in one predict call, and each question gets what it gets alone."""
    a = (_plan("berapa tarif pajak"), [Candidate(_chunk("a", "tarif pajak penghasilan 10 persen"), rrf_score=1 / 61),
                                      Candidate(_chunk("b", "sewa tanah dan bangunan"), rrf_score=1 / 62)], 0.1, 0.05)
    b = (_plan("sewa bangunan"), [Candidate(_chunk("c", "bangunan yang disewakan"), rrf_score=1 / 61)], 0.0, 0.5)
    alone = [asyncio.run(reranker.rerank(*item)) for item in (a, b)]
    predicts = []
    predict = reranker._model.predict
    monkeypatch.setattr(reranker._model, "predict", lambda pairs, **kw: predicts.append(len(pairs)) or predict(pairs, **kw))
    together = asyncio.run(reranker.rerank_batch([a, b]))
    assert predicts == [3]
    for got, want in zip(together, alone):
        assert [c.chunk.chunk_id for c in got] == [c.chunk.chunk_id for c in want]
        assert [c.rerank_score for c in got] == pytest.approx([c.rerank_score for c in want], abs=1e-5)


def test_route_weights_move_official_and_fresh_sources_up(reranker):
    text = "tarif pajak penghasilan atas sewa tanah dan bangunan adalah 10 persen"
    media = Candidate(_chunk("m", text, authority="media", published="2025-06-01"), rrf_score=1 / 61)
    official_old = Candidate(_chunk("o", text, authority="official", published="2020-01-01"), rrf_score=1 / 61)
    plan = _plan("tarif sewa tanah")
    wording = asyncio.run(reranker.rerank(plan, [media, official_old], 0.5, 0.0))
    assert wording[0].chunk.chunk_id == "o"  # a provision's wording: the official source first
    recent = asyncio.run(reranker.rerank(plan, [media, official_old], 0.0, 0.5))
    assert recent[0].chunk.chunk_id == "m"  # what changed recently: the newest first


@pytest.fixture(scope="module")
def model_corpus(tmp_path_factory, bge_m3_dir, cross_encoder_dir, nli_dir):
    p = load_profile()
    p = _with(p, embedder=EmbedderSettings(backend="bge-m3", model=str(bge_m3_dir), sparse=True, max_length=128),
              reranker=RerankerSettings(backend="cross-encoder", model=str(cross_encoder_dir), max_length=128,
                                        weights={"cross_encoder": 0.5, "coverage": 0.3, "fused": 0.2}),
              judge=JudgeSettings(backend="nli", model=str(nli_dir)),
              # random-init models order the context at random: the reader's thresholds off (the regulations'
              # answer_at too), so whatever it reads is claimed and the NLI judge has claims to read; the
              # embedder's readings off (cross-lingual and prose: fitted with the lite embedder's cosines, and refused
              # with another)
              generator=p.settings.generator.model_copy(update={"answer_threshold": 0.0, "answer_at": None,
                                                                "cross_lingual": None, "prose_reading": None}))
    corpus = Corpus(tmp_path_factory.mktemp("model-corpus"), p)
    report = corpus.ingest([SAMPLE])
    assert report.ingested and not report.errors
    yield corpus
    corpus.close()


def test_sparse_lane_search_agrees_with_brute_force(model_corpus):
    emb = model_corpus.embedder
    dense_index = model_corpus.dense
    ids = sorted(dense_index.all_ids())
    chunks = model_corpus.store.get(ids)
    from pipeline.text import embedding_text

    _, stored = asyncio.run(emb.embed_passages_hybrid([embedding_text(chunks[i]) for i in ids]))
    _, (query,) = asyncio.run(emb.embed_queries_hybrid(["tarif pajak penghasilan sewa tanah"]))
    brute = sorted(((sum(query.get(k, 0.0) * v for k, v in w.items()), i) for i, w in zip(ids, stored)),
                   reverse=True)
    brute = [(i, s) for s, i in brute if s > 1e-6]
    hits = asyncio.run(dense_index.sparse_search(query, len(ids)))
    assert hits, "the sparse lane found nothing"
    assert [i for i, _ in hits] == [i for i, _ in brute][:len(hits)]
    assert all(abs(s - dict(brute)[i]) < 1e-3 for i, s in hits)
    scored = asyncio.run(dense_index.sparse_score(query, [i for i, _ in hits[:3]]))
    assert all(abs(scored[i] - s) < 1e-3 for i, s in hits[:3])


def test_a_question_runs_through_every_real_backend(model_corpus):
    orch = model_corpus.orchestrator(write_traces=False)
    assert orch.components.context.retriever.sparse is not None
    result, trace = asyncio.run(orch.run("Berapa tarif PPh final atas sewa tanah dan bangunan?"))
    assert result.outcome in ("answer", "refusal")
    attempt = trace.parts[0].attempts[0]
    assert any(c.sparse_score is not None and c.sparse_rank is not None for c in attempt.candidates)
    assert all("cross_encoder" in c.rerank_components for c in attempt.candidates if c.rerank_score is not None)
    assert trace.components["embedder"].startswith("bge-m3/") and trace.components["judge"].startswith("nli/")
    calls = [c for a in trace.parts[0].attempts for c in a.judge_calls]
    assert calls and all(c.verdict.judge.startswith("nli/") for c in calls)


def test_reingest_changes_nothing_and_profiles_cannot_mix_lanes(model_corpus):
    again = model_corpus.ingest([SAMPLE])
    assert again.ingested == [] and again.embedded == 0
    # the same collection opened by a profile without the sparse lane is refused, not misread
    with pytest.raises(CorpusIndexError, match="sparse lane"):
        MilvusDenseIndex(model_corpus.milvus_uri, model_corpus.embedder.dim, sparse=False)


def test_judge_factory_and_reranker_without_model_are_config_errors():
    with pytest.raises(ValueError, match="cross_encoder"):
        RerankerSettings(backend="cross-encoder", model="x/y")
    with pytest.raises(ValueError, match="sparse"):
        EmbedderSettings(backend="sentence-transformers", model="x/y", sparse=True)
    assert make_judge(load_profile()).name == "verbatim"
