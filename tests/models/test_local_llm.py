"""The in-process LLM generators (pipeline/backends/local_llm.py).

TransformersGenerator runs the tiny random-init Qwen2 and Llama from tiny.py through the real
loading, prompting and generation code. A random model writes nonsense, so where a test needs
particular text the model's token choice and the decode step are replaced by test doubles
(FakeGenerate, FakeDecode): the generator's own code still builds the prompt, decides the
finish reason and hands the text to the real orchestrator and gates.

vLLM cannot run here (no GPU, not installed): VLLMGenerator runs against a fake `vllm` module
(FakeVLLM) whose fake AsyncLLM records what the engine is given and returns canned RequestOutputs,
and its pure parts (SamplingParams keywords for both vLLM APIs, output conversion) are tested
directly. Concurrency, timeouts and aborts: tests/models/test_async_generator.py.
"""
from __future__ import annotations

import asyncio
import json
import sys
import types
from dataclasses import dataclass, field

import pytest
import torch

from pipeline.backends import make_generator
from pipeline.backends.local_llm import (
    REWRITE_MAX_TOKENS, TransformersGenerator, VLLMGenerator, chat_prompt_ids, plain_chat_text,
    structured_output_kwargs, token_counter, torch_dtype, vllm_output_text, vllm_sampling_kwargs)
from pipeline.claims import claim_json_schema, parse_claims
from pipeline.config import GeneratorSettings, LocalLLMSettings, load_profile
from pipeline.errors import ConfigError, GenerationError
from pipeline.models import ModelUnavailable
from pipeline.prompts import build_prompt, estimate_tokens
from pipeline.types import ContextItem, GenerationOutput, GenerationRequest

from . import tiny
from .fake_vllm import FakeCompletion, FakeParams, FakeRequestOutput

RATE = "Berapa tarif pajak penghasilan atas persewaan tanah dan bangunan?"


@pytest.fixture(scope="module")
def llama_dir(tmp_path_factory):
    return tiny.build_causal_lm(tmp_path_factory.mktemp("llama"), arch="llama")


def transformers_gen(model_dir, **settings) -> TransformersGenerator:
    return TransformersGenerator(LocalLLMSettings(model=str(model_dir), **{"max_tokens": 16, **settings}))


def record(i: int, words: int = 20) -> ContextItem:
    text = " ".join(["pajak penghasilan atas sewa tanah dan bangunan adalah sebesar 10 persen"] * 3).split()[:words]
    return ContextItem(chunk_id=f"c{i}", document="PMK 34 tahun 2017", location=f"Pasal {i}", text=" ".join(text),
                       is_example=False, lang="id", retrieval_score=1.0 - i / 10)


def request(n: int = 4, words: int = 20) -> GenerationRequest:
    return GenerationRequest(question=RATE, lang="id", context=tuple(record(i, words) for i in range(n)))


class FakeGenerate:
    """Stands in for `model.generate`: appends `new_tokens` (default: one word, then end of
    sequence) to the prompt instead of running the model, and records every call."""

    def __init__(self, eos: int, new_tokens: list[int] | None = None):
        self.new_tokens = new_tokens if new_tokens is not None else [10, eos]
        self.calls: list[dict] = []

    def __call__(self, input_ids, **kwargs):
        self.calls.append({"input_ids": input_ids[0].tolist(), **kwargs})
        return torch.cat([input_ids, torch.tensor([self.new_tokens], dtype=input_ids.dtype)], dim=1)


class FakeDecode:
    """Stands in for `tokenizer.decode`: returns scripted text (a string, or a function of
    nothing called at decode time) and records the ids it was asked to decode."""

    def __init__(self, text):
        self.text = text
        self.calls: list[tuple[list[int], dict]] = []

    def __call__(self, ids, **kwargs):
        self.calls.append((list(ids), kwargs))
        return self.text() if callable(self.text) else self.text


class SpyGenerate:
    """Wraps the real `model.generate` and records the prompt length it was given."""

    def __init__(self, real):
        self.real = real
        self.prompt_lengths: list[int] = []

    def __call__(self, input_ids, **kwargs):
        self.prompt_lengths.append(input_ids.shape[1])
        return self.real(input_ids, **kwargs)


def script(monkeypatch, gen: TransformersGenerator, text, model_stops: bool = True) -> tuple[FakeGenerate | None,
                                                                                              FakeDecode]:
    """Make `gen` write `text`: the model either stops at once (FakeGenerate emits EOS) or, with
    `model_stops=False`, the real model runs to its token limit; the decode returns `text`."""
    fake_gen = None
    if model_stops:
        fake_gen = FakeGenerate(gen.tokenizer.eos_token_id)
        monkeypatch.setattr(gen.model, "generate", fake_gen)
    fake_decode = FakeDecode(text)
    monkeypatch.setattr(gen.tokenizer, "decode", fake_decode)
    return fake_gen, fake_decode


# --- TransformersGenerator with the real tiny models ---------------------------------------------


@pytest.mark.parametrize("arch", ["qwen2", "llama"])
def test_tiny_model_loads_and_generates_deterministically_to_its_token_limit(arch, causal_lm_dir, llama_dir):
    model_dir = causal_lm_dir if arch == "qwen2" else llama_dir
    gen = transformers_gen(model_dir)
    assert gen.name == f"transformers/{model_dir}" and gen.device == "cpu"
    assert gen.model.dtype == torch.float32 and not gen.model.training
    assert gen.context_window == 4096  # the config's max_position_embeddings
    first = asyncio.run(gen.generate(request()))
    second = asyncio.run(gen.generate(request()))
    assert isinstance(first, GenerationOutput) and first.model == gen.name
    assert first.finish_reason == "length"  # 16 tokens of a random model: no end of sequence
    assert first.raw and first.raw == second.raw  # greedy at temperature 0
    assert first.context_cut == ()


def test_sampling_is_seeded_per_request_and_leaves_the_global_rng_alone(causal_lm_dir):
    gen = transformers_gen(causal_lm_dir, temperature=1.5, seed=7)
    state = torch.random.get_rng_state()
    a = asyncio.run(gen.generate(request()))
    b = asyncio.run(gen.generate(request()))
    assert a.raw == b.raw
    assert torch.equal(state, torch.random.get_rng_state())
    greedy = asyncio.run(transformers_gen(causal_lm_dir).generate(request()))
    assert a.raw != greedy.raw  # it really sampled


def test_a_reply_ending_in_eos_is_stop_and_only_new_tokens_are_decoded(monkeypatch, causal_lm_dir):
    gen = transformers_gen(causal_lm_dir)
    fake_gen, fake_decode = script(monkeypatch, gen, '{"claims": []}')
    out = asyncio.run(gen.generate(request()))
    assert out.finish_reason == "stop" and out.raw == '{"claims": []}'
    (ids, kwargs), = fake_decode.calls
    assert ids == fake_gen.new_tokens and kwargs == {"skip_special_tokens": True}
    call = fake_gen.calls[0]
    assert call["do_sample"] is False and call["max_new_tokens"] == 16
    assert call["input_ids"] == chat_prompt_ids(gen.tokenizer, build_prompt(request(), 6000, gen.count_tokens).messages)


def test_exactly_max_tokens_without_eos_is_length_and_eos_at_the_limit_is_stop(monkeypatch, causal_lm_dir):
    gen = transformers_gen(causal_lm_dir)
    eos = gen.tokenizer.eos_token_id
    for new_tokens, finish in (([10] * 16, "length"), ([10] * 15 + [eos], "stop"), ([10] * 3, "stop")):
        monkeypatch.setattr(gen.model, "generate", FakeGenerate(eos, new_tokens))
        assert asyncio.run(gen.generate(request())).finish_reason == finish


# --- through the real orchestrator and gates -----------------------------------------------------


def run(corpus, gen):
    return asyncio.run(corpus.orchestrator(generator=gen, write_traces=False).run(RATE))


@pytest.mark.parametrize("text, model_stops, reason", [
    ('{"claims": [{"text": "Tarif', False, "generator_output_truncated"),
    ("Tarifnya 10%.", True, "generator_output_invalid_json"),
    ('{"answer": "10%"}', True, "generator_output_off_schema"),
])
def test_unusable_output_is_a_refusal_stating_why(monkeypatch, fake_corpus, causal_lm_dir, text, model_stops, reason):
    gen = transformers_gen(causal_lm_dir)
    script(monkeypatch, gen, text, model_stops=model_stops)
    result, trace = run(fake_corpus, gen)
    assert result.outcome == "refusal" and result.reason_code == reason
    assert not [c for c in result.claims if c.status == "supported"]
    output = trace.parts[0].attempts[0].generator_output
    assert output.raw == text and output.model == gen.name
    assert output.finish_reason == ("stop" if model_stops else "length")


class SpyBuildPrompt:
    """Wraps pipeline.prompts.build_prompt and keeps the last request it was given."""

    def __init__(self, real):
        self.real = real
        self.request: GenerationRequest | None = None

    def __call__(self, request, *args, **kwargs):
        self.request = request
        return self.real(request, *args, **kwargs)


def test_a_faithful_reply_passes_the_gates(monkeypatch, fake_corpus, causal_lm_dir):
    import pipeline.backends.local_llm as local_llm

    spy = SpyBuildPrompt(local_llm.build_prompt)
    monkeypatch.setattr(local_llm, "build_prompt", spy)

    def faithful() -> str:
        item = next(i for i in spy.request.context if "10% (sepuluh persen)" in i.text)
        start = item.text.index("Besarnya")
        quote = item.text[start:item.text.index("bangunan.", start) + len("bangunan.")]
        return json.dumps({"claims": [{"text": " ".join(quote.split()), "self_score": 0.9,
                                       "citations": [{"chunk_id": item.chunk_id, "quote": quote}]}]})

    gen = transformers_gen(causal_lm_dir)
    script(monkeypatch, gen, faithful)
    result, _ = run(fake_corpus, gen)
    assert result.outcome == "answer"
    assert any("10%" in c.text for c in result.claims if c.status == "supported")


# --- the context: the records' budget in model tokens, and the model's window --------------------


def test_the_records_budget_is_counted_with_the_model_tokenizer_and_cuts_the_lowest_ranked(monkeypatch,
                                                                                             causal_lm_dir):
    gen = transformers_gen(causal_lm_dir, context_tokens=64)
    req = request(n=4, words=10)  # a record costs ~26 model tokens, but ~33 by the 3-characters estimate
    by_model = build_prompt(req, 64, token_counter(gen.tokenizer))
    by_estimate = build_prompt(req, 64, estimate_tokens)
    assert by_model.cut != by_estimate.cut  # the test can tell the two counts apart
    spy = SpyGenerate(gen.model.generate)
    monkeypatch.setattr(gen.model, "generate", spy)
    out = asyncio.run(gen.generate(req))
    assert out.context_cut == by_model.cut and len(by_model.kept) >= 2
    assert list(by_model.kept) + list(out.context_cut) == [c.chunk_id for c in req.context]  # best ranked kept
    assert spy.prompt_lengths == [len(chat_prompt_ids(gen.tokenizer, by_model.messages))]


def test_a_prompt_that_would_overflow_the_context_window_loses_more_records(monkeypatch, causal_lm_dir):
    gen = transformers_gen(causal_lm_dir, context_tokens=6000)
    req = request(n=4)
    full = len(chat_prompt_ids(gen.tokenizer, build_prompt(req, 6000, gen.count_tokens).messages))
    window = full + 16 - 30  # about one record too long
    monkeypatch.setattr(gen, "context_window", window)
    spy = SpyGenerate(gen.model.generate)
    monkeypatch.setattr(gen.model, "generate", spy)
    out = asyncio.run(gen.generate(req))
    assert out.context_cut and out.context_cut == tuple(c.chunk_id for c in req.context[-len(out.context_cut):])
    assert len(out.context_cut) < 4
    assert spy.prompt_lengths[0] + 16 <= window


def test_a_window_too_small_for_even_one_record_is_a_generation_error(monkeypatch, fake_corpus, causal_lm_dir):
    gen = transformers_gen(causal_lm_dir)
    monkeypatch.setattr(gen, "context_window", 40)
    with pytest.raises(GenerationError, match="does not fit the model's context of 40 tokens"):
        asyncio.run(gen.generate(request()))
    result, _ = run(fake_corpus, gen)  # the orchestrator turns it into a refusal, not a 500
    assert result.outcome == "refusal" and result.reason_code == "generator_failed"


def test_without_a_chat_template_the_prompt_is_plain_role_content_turns(causal_lm_dir):
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(causal_lm_dir)
    messages = [{"role": "system", "content": "jawab pajak"}, {"role": "user", "content": "berapa tarif pajak"}]
    templated = chat_prompt_ids(tok, messages)
    tok.chat_template = None
    plain = chat_prompt_ids(tok, messages)
    assert plain_chat_text(messages) == "system: jawab pajak\n\nuser: berapa tarif pajak\n\nassistant:"
    assert plain == tok(plain_chat_text(messages))["input_ids"] and plain != templated


# --- the query rewrite ---------------------------------------------------------------------------


@pytest.mark.parametrize("text, expected", [
    ("kueri: tarif pajak penghasilan sewa tanah bangunan\npenjelasan", "tarif pajak penghasilan sewa tanah bangunan"),
    ("", None),
    (RATE, None),  # the question unchanged
])
def test_rewrite_query_parses_the_model_line_or_says_it_cannot(monkeypatch, causal_lm_dir, text, expected):
    gen = transformers_gen(causal_lm_dir)
    fake_gen, _ = script(monkeypatch, gen, text)
    assert asyncio.run(gen.rewrite_query(RATE, "id")) == expected
    call = fake_gen.calls[0]
    assert call["max_new_tokens"] == REWRITE_MAX_TOKENS and call["do_sample"] is False


def test_a_followup_is_made_standalone_by_the_model_and_checked(monkeypatch, causal_lm_dir):
    """The tiny model's transformers path, its output scripted: a rewrite that keeps both turns' words is used, one
    that drifts is not (pipeline.followup then uses the rules)."""
    from pipeline.followup import standalone

    gen = transformers_gen(causal_lm_dir)
    script(monkeypatch, gen, "Berapa tarif pajak penghasilan atas persewaan tanah dan bangunan pada tahun 2024?")
    got = asyncio.run(standalone([RATE, "dan kalau untuk tahun 2024?"], "id", gen))
    assert got.by == gen.name and got.question.endswith("pada tahun 2024?")
    fake_gen, _ = script(monkeypatch, gen, "Berapa tarif bea masuk mobil listrik?")
    got = asyncio.run(standalone([RATE, "dan kalau untuk tahun 2024?"], "id", gen))
    assert got.by == "rules" and got.question == RATE[:-1] + " untuk tahun 2024?"
    assert fake_gen.calls[0]["do_sample"] is False


class FakeBrokenGenerate:
    def __call__(self, *args, **kwargs):
        raise RuntimeError("out of memory")


def test_a_failing_rewrite_is_none_and_a_failing_answer_a_generation_error(monkeypatch, causal_lm_dir):
    gen = transformers_gen(causal_lm_dir)
    monkeypatch.setattr(gen.model, "generate", FakeBrokenGenerate())
    assert asyncio.run(gen.rewrite_query(RATE, "id")) is None
    with pytest.raises(GenerationError, match="out of memory"):
        asyncio.run(gen.generate(request()))


# --- loading: weights, dtype, the factory ---------------------------------------------------------


def test_a_missing_model_names_where_it_looked_and_how_to_fetch_it(monkeypatch, tmp_path):
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path))
    with pytest.raises(ModelUnavailable) as e:
        TransformersGenerator(LocalLLMSettings(model="saksi-test/absent-llm"))
    assert "hf download saksi-test/absent-llm" in e.value.message and str(tmp_path) in e.value.message


def test_dtype_auto_is_fp32_on_cpu_fp16_on_cuda_and_explicit_values_are_honoured(causal_lm_dir):
    assert torch_dtype("auto", "cpu") == torch.float32 and torch_dtype("auto", "cuda:1") == torch.float16
    assert torch_dtype("bfloat16", "cpu") == torch.bfloat16
    with pytest.raises(ConfigError, match="unknown dtype"):
        torch_dtype("int3", "cpu")
    assert transformers_gen(causal_lm_dir, dtype="bfloat16").model.dtype == torch.bfloat16


def with_generator(backend: str, local: LocalLLMSettings):
    p = load_profile("lite")
    return p.model_copy(update={"settings": p.settings.model_copy(
        update={"generator": GeneratorSettings(backend=backend, local=local)})})


def test_the_profile_selects_the_transformers_backend(causal_lm_dir):
    gen = make_generator(with_generator("transformers", LocalLLMSettings(model=str(causal_lm_dir), max_tokens=16)),
                         analyzer=None)
    assert isinstance(gen, TransformersGenerator) and gen.name == f"transformers/{causal_lm_dir}"
    assert gen.settings.max_tokens == 16


# --- VLLMGenerator ---------------------------------------------------------------------------------


class FakeStructuredOutputsParams(FakeParams):
    pass


class FakeGuidedDecodingParams(FakeParams):
    pass


@dataclass
class FakeVLLM:
    """A fake `vllm` package: `AsyncLLM.from_engine_args(AsyncEngineArgs(**kwargs))` records the
    keyword arguments, and each generate call, and answers with one final output from
    `reply(prompt_token_ids) -> (text, finish_reason)`."""

    api: str = "structured_outputs"
    reply: object = lambda ids: ('{"claims": []}', "stop")
    max_model_len: int = 4096
    engines: list = field(default_factory=list)

    def module(self) -> types.ModuleType:
        fake = self
        vllm = types.ModuleType("vllm")
        sampling = types.ModuleType("vllm.sampling_params")
        if fake.api == "structured_outputs":
            sampling.StructuredOutputsParams = FakeStructuredOutputsParams
        elif fake.api == "guided_decoding":
            sampling.GuidedDecodingParams = FakeGuidedDecodingParams

        class FakeAsyncEngineArgs:
            def __init__(self, **kwargs):
                self.kwargs = kwargs

        class FakeAsyncLLM:
            def __init__(self, engine_args):
                self.kwargs = engine_args.kwargs
                self.calls: list[tuple[list[int], FakeParams, str]] = []
                self.aborted: list[str] = []
                self.model_config = types.SimpleNamespace(max_model_len=self.kwargs["max_model_len"]
                                                          or fake.max_model_len)
                fake.engines.append(self)

            @classmethod
            def from_engine_args(cls, engine_args):
                return cls(engine_args)

            async def generate(self, prompt, sampling_params, request_id):
                self.calls.append((prompt["prompt_token_ids"], sampling_params, request_id))
                text, finish = fake.reply(prompt["prompt_token_ids"])
                yield FakeRequestOutput([FakeCompletion(text, finish)])

            async def abort(self, request_id):
                self.aborted.append(request_id)

        arg_utils = types.ModuleType("vllm.engine.arg_utils")
        arg_utils.AsyncEngineArgs = FakeAsyncEngineArgs
        async_llm = types.ModuleType("vllm.v1.engine.async_llm")
        async_llm.AsyncLLM = FakeAsyncLLM
        vllm.SamplingParams = FakeParams
        vllm.sampling_params = sampling
        self.submodules = {"vllm.sampling_params": sampling, "vllm.engine": types.ModuleType("vllm.engine"),
                           "vllm.engine.arg_utils": arg_utils, "vllm.v1": types.ModuleType("vllm.v1"),
                           "vllm.v1.engine": types.ModuleType("vllm.v1.engine"), "vllm.v1.engine.async_llm": async_llm}
        return vllm

    def install(self, monkeypatch) -> "FakeVLLM":
        module = self.module()
        monkeypatch.setitem(sys.modules, "vllm", module)
        for name, sub in self.submodules.items():
            monkeypatch.setitem(sys.modules, name, sub)
        return self


def test_without_vllm_the_backend_asks_for_the_gpu_extra(monkeypatch, causal_lm_dir):
    monkeypatch.setitem(sys.modules, "vllm", None)  # an import of it fails, installed or not
    with pytest.raises(ConfigError, match=r"pip install -e '\.\[gpu\]'"):
        VLLMGenerator(LocalLLMSettings(model=str(causal_lm_dir)))


@pytest.mark.parametrize("api, key, cls", [
    ("structured_outputs", "structured_outputs", FakeStructuredOutputsParams),  # vLLM >= 0.11
    ("guided_decoding", "guided_decoding", FakeGuidedDecodingParams),  # vLLM 0.6 - 0.11
])
def test_sampling_params_constrain_decoding_with_the_installed_api(api, key, cls):
    module = FakeVLLM(api=api).module().sampling_params
    s = LocalLLMSettings(model="m", max_tokens=300, temperature=0.0, seed=11)
    kwargs = vllm_sampling_kwargs(s, module, schema=claim_json_schema())
    assert set(kwargs) == {"temperature", "seed", "max_tokens", "repetition_penalty", key}
    assert (kwargs["temperature"], kwargs["seed"], kwargs["max_tokens"], kwargs["repetition_penalty"]) == (0.0, 11,
                                                                                                          300, 1.0)
    assert isinstance(kwargs[key], cls)
    assert kwargs[key].kwargs == {"json": claim_json_schema(), "disable_any_whitespace": True}
    assert key not in vllm_sampling_kwargs(s, module)  # no schema, no constraint (the rewrite)


def test_a_vllm_without_structured_outputs_is_a_config_error_unless_structured_is_off(monkeypatch, causal_lm_dir):
    with pytest.raises(ConfigError, match="structured: false"):
        structured_output_kwargs(FakeVLLM(api="none").module().sampling_params, {})
    FakeVLLM(api="none").install(monkeypatch)
    with pytest.raises(ConfigError, match="structured: false"):
        VLLMGenerator(LocalLLMSettings(model=str(causal_lm_dir)))
    assert VLLMGenerator(LocalLLMSettings(model=str(causal_lm_dir), structured=False)).name.startswith("vllm/")


def test_vllm_output_becomes_the_generation_output_and_an_unfinished_request_an_error():
    out = vllm_output_text(FakeRequestOutput([FakeCompletion('{"claims": [', "length")]))
    assert out == ('{"claims": [', "length")  # the text untouched, the finish reason passed on
    for bad in (FakeRequestOutput([]), FakeRequestOutput([FakeCompletion("x", None)]),
                FakeRequestOutput([FakeCompletion("x", "abort")])):
        with pytest.raises(GenerationError):
            vllm_output_text(bad)


def test_vllm_engine_is_built_from_the_settings_and_prompted_with_the_chat_template(monkeypatch, causal_lm_dir):
    fake = FakeVLLM().install(monkeypatch)
    settings = LocalLLMSettings(model=str(causal_lm_dir), dtype="bfloat16", max_tokens=200, seed=5,
                                max_model_len=2048, gpu_memory_utilization=0.6, tensor_parallel_size=2)
    gen = VLLMGenerator(settings)
    engine, = fake.engines
    assert engine.kwargs == {"model": str(causal_lm_dir), "seed": 5, "dtype": "bfloat16", "max_model_len": 2048,
                             "gpu_memory_utilization": 0.6, "tensor_parallel_size": 2}
    assert gen.name == f"vllm/{causal_lm_dir}" and gen.context_window == 2048
    out = asyncio.run(gen.generate(request()))
    assert out.model == gen.name and out.finish_reason == "stop" and parse_claims(out.raw, out.finish_reason)
    ids, params, request_id = engine.calls[0]
    assert ids == chat_prompt_ids(gen.tokenizer, build_prompt(request(), 6000, gen.count_tokens).messages)
    assert params.kwargs["temperature"] == 0.0 and params.kwargs["seed"] == 5 and params.kwargs["max_tokens"] == 200
    assert params.kwargs["repetition_penalty"] == 1.0
    assert params.kwargs["structured_outputs"].kwargs == {"json": claim_json_schema(), "disable_any_whitespace": True}
    assert request_id.startswith("saksi-") and not engine.aborted


def test_vllm_truncated_output_is_a_refusal_through_the_orchestrator(monkeypatch, fake_corpus, causal_lm_dir):
    FakeVLLM(reply=lambda ids: ('{"claims": [{"text": "Tarif', "length")).install(monkeypatch)
    gen = VLLMGenerator(LocalLLMSettings(model=str(causal_lm_dir)))
    result, trace = run(fake_corpus, gen)
    assert result.outcome == "refusal" and result.reason_code == "generator_output_truncated"
    assert trace.parts[0].attempts[0].generator_output.model == gen.name


def test_vllm_prompt_is_fitted_to_the_engine_window(monkeypatch, causal_lm_dir):
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(causal_lm_dir)
    full = len(chat_prompt_ids(tok, build_prompt(request(n=6), 6000, token_counter(tok)).messages))
    window = full + 16 - 60  # about two records too long
    fake = FakeVLLM(max_model_len=window).install(monkeypatch)  # the engine's own limit, none in the settings
    gen = VLLMGenerator(LocalLLMSettings(model=str(causal_lm_dir), max_tokens=16))
    out = asyncio.run(gen.generate(request(n=6)))
    ids, _, _ = fake.engines[0].calls[0]
    assert gen.context_window == window and len(ids) + 16 <= window
    assert 2 <= len(out.context_cut) < 6
    assert out.context_cut and out.context_cut == tuple(f"c{i}" for i in range(6 - len(out.context_cut), 6))


def test_vllm_rewrite_is_greedy_short_and_unconstrained(monkeypatch, causal_lm_dir):
    fake = FakeVLLM(reply=lambda ids: ("tarif PPh final sewa tanah dan bangunan", "stop")).install(monkeypatch)
    gen = VLLMGenerator(LocalLLMSettings(model=str(causal_lm_dir), temperature=0.8))
    assert asyncio.run(gen.rewrite_query(RATE, "id")) == "tarif PPh final sewa tanah dan bangunan"
    _, params, _ = fake.engines[0].calls[0]
    assert params.kwargs == {"temperature": 0.0, "seed": 0, "max_tokens": REWRITE_MAX_TOKENS,
                             "repetition_penalty": 1.0}
    fake.reply = lambda ids: ("", "stop")
    assert asyncio.run(gen.rewrite_query(RATE, "id")) is None


def test_the_profile_selects_the_vllm_backend(monkeypatch, causal_lm_dir):
    FakeVLLM().install(monkeypatch)
    gen = make_generator(with_generator("vllm", LocalLLMSettings(model=str(causal_lm_dir))), analyzer=None)
    assert isinstance(gen, VLLMGenerator) and gen.name == f"vllm/{causal_lm_dir}"
