"""Generators that run an LLM in this process: vLLM's online engine (GPU) or transformers (small
CPU models). They are the in-process twins of `openai_compat.py` and behave the same way.

The prompt is `pipeline.prompts.build_prompt`, with the records' budget counted by the model's
own tokenizer. The whole chat-templated prompt plus `max_tokens` must also fit the model's
context window: when it does not, lower-ranked records are cut further, and every cut id goes
to `GenerationOutput.context_cut` so the trace says what the model never saw.

Nothing the model writes is trusted. The reply goes to the gates as text: an answer that ran
into `max_tokens` (`finish_reason == "length"`), invalid JSON or off-schema output becomes a
refusal saying so (pipeline/claims.py). vLLM constrains decoding to the claim JSON schema;
transformers does not (its `generate` has no schema constraint), so a small model's reply is
often unusable — which the gates report, rather than anything being repaired here.

vLLM runs as `AsyncLLM`, its engine for online serving: every request is submitted with its own
id and concurrent requests are decoded together (continuous batching); one past its timeout or
whose caller goes away is aborted so its slot is freed. transformers' `generate` is synchronous
and not thread-safe: that generator runs in `asyncio.to_thread` under one lock, one request at a
time — for small CPU models only.

Why AsyncLLM inside the Generator deployment is the default for the gpu profile, rather than a
separate `vllm serve` / Ray Serve LLM endpoint behind the `openai` backend (which exists, sends
the same explicit sampling parameters, and stays one setting away: generator.backend: openai):
the same engine and the same batching either way, but in-process the prompt is tokenized and
fitted to the window by the model's own tokenizer and handed over as token ids (no second
tokenization or chat templating in a server that could differ), structured output, seed and
repetition penalty are set per request in code rather than inherited from a server's defaults
and the model's generation config, there is one deployment to scale, health-check and trace
instead of two, and no HTTP hop or second timeout to keep consistent. The separate server is the
better choice when the LLM is shared with other applications, or must scale and upgrade on its
own schedule (the vLLM version then lives only in that server's image).

torch, transformers and vllm are imported in the constructors, so this module imports without them.
"""
from __future__ import annotations

import asyncio
import logging
import threading
import uuid
from collections.abc import Mapping
from typing import Any, AsyncIterator, Callable, Sequence

from ..claims import claim_json_schema
from ..config import LocalLLMSettings
from ..errors import ConfigError, GenerationError
from ..models import resolve_model, torch_device
from ..prompts import (SYSTEM, Prompt, build_followup_messages, build_prompt, build_rewrite_messages, parse_rewrite,
                       render_record)
from ..types import GenerationOutput, GenerationRequest

log = logging.getLogger(__name__)

REWRITE_MAX_TOKENS = 64  # a search query is one short line

Messages = list[dict[str, str]]


# --- shared: token counting, the chat prompt, fitting the context window -----------------------


def token_counter(tokenizer) -> Callable[[str], int]:
    """Tokens `text` costs inside a prompt, by the model's own tokenizer (no BOS/EOS added)."""
    return lambda text: len(tokenizer(text, add_special_tokens=False, verbose=False)["input_ids"])


def plain_chat_text(messages: Sequence[Mapping[str, str]]) -> str:
    """The prompt for a tokenizer without a chat template: one `role: content` block per
    message and an open `assistant:` turn. Base models get no special formatting beyond this."""
    return "\n\n".join(f"{m['role']}: {m['content']}" for m in messages) + "\n\nassistant:"


def chat_prompt_ids(tokenizer, messages: Sequence[Mapping[str, str]]) -> list[int]:
    """Token ids of the prompt: the tokenizer's chat template with the assistant turn opened,
    or `plain_chat_text` (with the tokenizer's usual special tokens) when it has none."""
    if getattr(tokenizer, "chat_template", None):
        ids = tokenizer.apply_chat_template(list(messages), add_generation_prompt=True, tokenize=True)
        if isinstance(ids, Mapping) or hasattr(ids, "keys"):  # transformers 5 returns a BatchEncoding
            ids = ids["input_ids"]
        return [int(i) for i in ids]
    return [int(i) for i in tokenizer(plain_chat_text(messages), verbose=False)["input_ids"]]


def fit_prompt(request: GenerationRequest, context_tokens: int, count_tokens: Callable[[str], int],
               prompt_ids: Callable[[Messages], list[int]], window: int | None,
               max_new_tokens: int) -> tuple[Prompt, list[int]]:
    """The prompt and its token ids. Records are kept best first within `context_tokens`; if the
    templated prompt plus `max_new_tokens` still overflows `window` (the model's context), the
    records' budget shrinks by the overflow and the prompt is rebuilt, until it fits. A prompt
    that cannot fit even with one record is a GenerationError (the orchestrator refuses)."""
    lang = request.lang if request.lang in SYSTEM else "en"
    budget = context_tokens
    while True:
        prompt = build_prompt(request, budget, count_tokens)
        ids = prompt_ids(prompt.messages)
        over = len(ids) + max_new_tokens - window if window else 0
        if over <= 0:
            return prompt, ids
        if len(prompt.kept) <= 1:
            raise GenerationError(
                f"the prompt ({len(ids)} tokens with {len(prompt.kept)} record(s)) plus {max_new_tokens} answer "
                f"tokens does not fit the model's context of {window} tokens; lower max_tokens or use a model "
                "with a longer context")
        kept = set(prompt.kept)
        used = sum(count_tokens(render_record(c, lang)) for c in request.context if c.chunk_id in kept)
        budget = min(budget, used) - over  # strictly below what the kept records cost: something goes


# --- transformers --------------------------------------------------------------------------------

_DTYPES = {"float32": "float32", "fp32": "float32", "float": "float32", "float16": "float16", "fp16": "float16",
           "half": "float16", "bfloat16": "bfloat16", "bf16": "bfloat16"}


def torch_dtype(requested: str, device: str):
    """'auto' → float16 on CUDA, float32 elsewhere (CPU half precision is slow and lossy);
    an explicit dtype is honoured."""
    import torch

    if requested == "auto":
        return torch.float16 if device.startswith("cuda") else torch.float32
    name = _DTYPES.get(requested.lower())
    if name is None:
        raise ConfigError(f"unknown dtype {requested!r} for the local generator (auto, float32, float16, bfloat16)")
    return getattr(torch, name)


def _dtype_keyword(transformers) -> str:
    """`from_pretrained` takes `dtype` from transformers 4.56 (`torch_dtype` before, deprecated since)."""
    try:
        major, minor = (int(p) for p in transformers.__version__.split(".")[:2])
    except ValueError:
        return "dtype"
    return "dtype" if (major, minor) >= (4, 56) else "torch_dtype"


def _context_window(config) -> int | None:
    for attr in ("max_position_embeddings", "n_positions", "max_sequence_length", "seq_length"):
        value = getattr(config, attr, None)
        if isinstance(value, int) and value > 0:
            return value
    return None


class _LocalGenerator:
    """What both in-process backends share: fit the prompt to the budget and the window,
    complete it under one lock, and the corrective rewrite. Subclasses load a model and
    implement `_complete`."""

    settings: LocalLLMSettings
    name: str
    tokenizer: Any
    count_tokens: Callable[[str], int]
    context_window: int | None
    _lock: threading.Lock

    def _complete(self, ids: list[int], max_tokens: int, rewrite: bool) -> tuple[str, str]:
        """(text, finish reason) for the prompt's token ids; `rewrite`: greedy, unconstrained."""
        raise NotImplementedError

    def _generate(self, request: GenerationRequest) -> GenerationOutput:
        s = self.settings
        with self._lock:
            prompt, ids = fit_prompt(request, s.context_tokens, self.count_tokens,
                                     lambda m: chat_prompt_ids(self.tokenizer, m), self.context_window, s.max_tokens)
            text, finish = self._complete(ids, s.max_tokens, rewrite=False)
        return GenerationOutput(raw=text, model=self.name, finish_reason=finish, context_cut=prompt.cut)

    async def generate(self, request: GenerationRequest) -> GenerationOutput:
        return await asyncio.to_thread(self._generate, request)

    def _rewrite(self, messages: list[dict[str, str]], original: str) -> str | None:
        with self._lock:
            ids = chat_prompt_ids(self.tokenizer, messages)
            if self.context_window and len(ids) + REWRITE_MAX_TOKENS > self.context_window:
                return None
            text, _ = self._complete(ids, REWRITE_MAX_TOKENS, rewrite=True)
        return parse_rewrite(text, original)

    async def _model_rewrite(self, messages: list[dict[str, str]], original: str) -> str | None:
        """The model's one-line rewrite of `original` (greedy, short, unconstrained), or None."""
        try:
            return await asyncio.to_thread(self._rewrite, messages, original)
        except Exception as e:  # noqa: BLE001 — a failed rewrite falls back to the rules, never fails the request
            log.warning("%s could not rewrite: %s", self.name, e)
            return None

    async def rewrite_query(self, question: str, lang: str) -> str | None:
        """The model's rewrite for the corrective retry, or None (the rules rewrite then)."""
        return await self._model_rewrite(build_rewrite_messages(question, lang), question)

    async def rewrite_followup(self, previous: str, followup: str, lang: str) -> str | None:
        """A chat's follow-up as a standalone question (`pipeline.followup`, which checks it keeps what both turns
        asked), or None (the rules then)."""
        return await self._model_rewrite(build_followup_messages(previous, followup, lang), followup)


class TransformersGenerator(_LocalGenerator):
    """A causal LM through transformers' `generate`: greedy at temperature 0, else sampling
    seeded with `settings.seed` for every request (the same request gives the same reply)."""

    def __init__(self, settings: LocalLLMSettings):
        try:
            import torch
            import transformers
            from transformers import AutoModelForCausalLM, AutoTokenizer
        except ImportError as e:
            raise ConfigError("generator backend 'transformers' needs the `models` extra (torch, transformers): "
                              "pip install -e '.[models]'") from e
        self.settings = settings
        self.name = f"transformers/{settings.model}"
        path = resolve_model(settings.model, "generator")
        self.device = torch_device(settings.device)
        self.dtype = torch_dtype(settings.dtype, self.device)
        self.tokenizer = AutoTokenizer.from_pretrained(path, local_files_only=True)
        self.model = AutoModelForCausalLM.from_pretrained(path, local_files_only=True,
                                                          **{_dtype_keyword(transformers): self.dtype})
        self.model.to(self.device).eval()
        self.context_window = _context_window(self.model.config)
        self.count_tokens = token_counter(self.tokenizer)
        self._torch = torch
        self._lock = threading.Lock()
        if not getattr(self.tokenizer, "chat_template", None):
            log.warning("%s has no chat template; prompting with plain 'role: content' turns", settings.model)

    def _eos_ids(self) -> set[int]:
        ids: set[int] = set()
        for value in (getattr(self.model.generation_config, "eos_token_id", None), self.tokenizer.eos_token_id):
            if isinstance(value, int):
                ids.add(value)
            elif isinstance(value, (list, tuple)):
                ids.update(int(v) for v in value)
        return ids

    def _decode(self, ids: list[int], max_new_tokens: int, sample: bool) -> tuple[str, str]:
        """(decoded new text, finish reason). Call under the lock. "length" means it produced
        `max_new_tokens` without an end-of-sequence token."""
        torch = self._torch
        s = self.settings
        x = torch.tensor([ids], dtype=torch.long, device=self.device)
        pad = self.tokenizer.pad_token_id
        kwargs: dict[str, Any] = dict(attention_mask=torch.ones_like(x), max_new_tokens=max_new_tokens,
                                      pad_token_id=pad if pad is not None else next(iter(self._eos_ids()), None))
        if sample:
            kwargs.update(do_sample=True, temperature=s.temperature)
        else:  # greedy; cleared so a model's sampling defaults neither apply nor warn
            kwargs.update(do_sample=False, temperature=None, top_p=None, top_k=None)
        cuda = []
        if self.device.startswith("cuda"):
            index = torch.device(self.device).index
            cuda = [torch.cuda.current_device() if index is None else index]
        try:
            with torch.random.fork_rng(devices=cuda), torch.inference_mode():
                torch.manual_seed(s.seed)  # per request, inside the lock: reproducible, and the global RNG is kept
                out = self.model.generate(x, **kwargs)
        except (RuntimeError, ValueError) as e:
            raise GenerationError(f"{self.name} failed to generate: {e}") from e
        new = [int(t) for t in out[0, len(ids):].tolist()]
        eos = self._eos_ids()
        stopped = any(t in eos for t in new)
        finish = "length" if len(new) >= max_new_tokens and not stopped else "stop"
        return self.tokenizer.decode(new, skip_special_tokens=True), finish

    def _complete(self, ids: list[int], max_tokens: int, rewrite: bool) -> tuple[str, str]:
        return self._decode(ids, max_tokens, sample=not rewrite and self.settings.temperature > 0)


# --- vLLM ----------------------------------------------------------------------------------------
#
# API names used here, as in vLLM's own source (vllm-project/vllm, read for issue 17):
# - vllm/v1/engine/async_llm.py: `AsyncLLM.from_engine_args(engine_args)`;
#   `async def generate(prompt, sampling_params, request_id) -> AsyncGenerator[RequestOutput]`
#   (it aborts the request itself when the iterating task is cancelled); `async def abort(request_id)`,
#   a no-op for a request already finished or unknown; `model_config.max_model_len`; `shutdown()`.
# - vllm/engine/arg_utils.py: `AsyncEngineArgs(model=, seed=, dtype=, max_model_len=,
#   gpu_memory_utilization=, tensor_parallel_size=, max_num_seqs=)`.
# - vllm/sampling_params.py: `SamplingParams(temperature=, seed=, max_tokens=, repetition_penalty=,
#   structured_outputs=, output_kind=)`; `StructuredOutputsParams(json=, disable_any_whitespace=)`
#   (vLLM >= 0.11; docs.vllm.ai "Structured Outputs": the guided_* fields were removed in 0.12);
#   `RequestOutputKind.FINAL_ONLY`. `disable_any_whitespace` is honoured by the xgrammar and
#   guidance backends (vllm/config/structured_outputs.py) — the default "auto" picks one of them.


def structured_output_kwargs(sampling_params_module, schema: dict) -> dict[str, Any]:
    """The SamplingParams keyword that constrains decoding to `schema` with no free whitespace
    (so the model cannot spend its `max_tokens` on blank space, vLLM #38696 / #21026), for the
    installed vLLM: `structured_outputs=StructuredOutputsParams(json=…, disable_any_whitespace=True)`
    (vLLM ≥ 0.11; the only form from 0.12) or `guided_decoding=GuidedDecodingParams(json=…)`
    (vLLM 0.6 – 0.11; `disable_any_whitespace` only where that class has it)."""
    structured = getattr(sampling_params_module, "StructuredOutputsParams", None)
    if structured is not None:
        return {"structured_outputs": structured(json=schema, disable_any_whitespace=True)}
    guided = getattr(sampling_params_module, "GuidedDecodingParams", None)
    if guided is not None:
        try:
            return {"guided_decoding": guided(json=schema, disable_any_whitespace=True)}
        except TypeError:  # an older GuidedDecodingParams without the field
            log.warning("this vLLM's GuidedDecodingParams has no disable_any_whitespace; JSON may carry whitespace")
            return {"guided_decoding": guided(json=schema)}
    raise ConfigError("the installed vLLM has neither StructuredOutputsParams nor GuidedDecodingParams; "
                      "upgrade vLLM (pip install -e '.[gpu]') or set generator.local.structured: false")


def vllm_sampling_kwargs(settings: LocalLLMSettings, sampling_params_module, *, max_tokens: int | None = None,
                         schema: dict | None = None, greedy: bool = False, stream: bool = False) -> dict[str, Any]:
    """Keyword arguments for `vllm.SamplingParams`, every one explicit so that nothing comes from
    the model's generation config: temperature (0 is greedy in vLLM), seed, max_tokens,
    repetition_penalty 1.0 (a penalty would punish copying the records' words, which is what a
    verbatim quote is), the JSON-schema constraint when a schema is given, and only the final
    output streamed back (`RequestOutputKind.FINAL_ONLY`, where the installed vLLM has it), or with `stream` the
    whole text so far at every step (`CUMULATIVE`, vLLM's default), which `VLLMGenerator.stream` hands on as it grows."""
    kwargs: dict[str, Any] = {"temperature": 0.0 if greedy else settings.temperature, "seed": settings.seed,
                              "max_tokens": max_tokens or settings.max_tokens, "repetition_penalty": 1.0}
    kind = getattr(sampling_params_module, "RequestOutputKind", None)
    if kind is not None and hasattr(kind, "FINAL_ONLY" if not stream else "CUMULATIVE"):
        kwargs["output_kind"] = kind.CUMULATIVE if stream else kind.FINAL_ONLY
    if schema is not None:
        kwargs.update(structured_output_kwargs(sampling_params_module, schema))
    return kwargs


def vllm_output_text(request_output) -> tuple[str, str]:
    """(text, finish reason) of a vLLM RequestOutput's first completion. A request the engine
    did not finish (no finish reason, or aborted) is a GenerationError."""
    outputs = getattr(request_output, "outputs", None)
    if not outputs:
        raise GenerationError("vLLM returned no completion for the request")
    completion = outputs[0]
    finish = getattr(completion, "finish_reason", None)
    if finish is None or str(finish) == "abort":
        raise GenerationError(f"vLLM did not finish the request (finish_reason={finish!r})")
    return completion.text or "", str(finish)


def vllm_engine_args(settings: LocalLLMSettings, model_path: str) -> dict[str, Any]:
    """Keyword arguments for vLLM's `AsyncEngineArgs` from the settings."""
    kwargs: dict[str, Any] = {"model": model_path, "seed": settings.seed, "dtype": settings.dtype,
                              "max_model_len": settings.max_model_len,
                              "gpu_memory_utilization": settings.gpu_memory_utilization,
                              "tensor_parallel_size": settings.tensor_parallel_size}
    if settings.max_num_seqs is not None:
        kwargs["max_num_seqs"] = settings.max_num_seqs
    return kwargs


def vllm_async_engine(settings: LocalLLMSettings, model_path: str):
    """vLLM's online engine, `AsyncLLM.from_engine_args(AsyncEngineArgs(…))`. The default
    `engine_factory` of VLLMGenerator; tests pass a fake instead."""
    from vllm.engine.arg_utils import AsyncEngineArgs
    from vllm.v1.engine.async_llm import AsyncLLM

    return AsyncLLM.from_engine_args(AsyncEngineArgs(**vllm_engine_args(settings, model_path)))


def _engine_max_len(engine) -> int | None:
    value = getattr(getattr(engine, "model_config", None), "max_model_len", None)
    return value if isinstance(value, int) and value > 0 else None


class _EngineLoop:
    """A private event loop in a daemon thread that owns the engine. vLLM's AsyncLLM binds its
    output handler to the loop it first runs in; giving it its own loop lets callers come from
    any loop (a Serve replica's, or each `asyncio.run` of the CLI and eval), and keeps the
    engine's output processing off the caller's loop."""

    def __init__(self, name: str):
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, name=name, daemon=True)
        self.thread.start()

    def call(self, fn: Callable[[], Any]) -> Any:
        """fn() run inside the loop (so that what it builds finds that loop running), waited for."""
        async def run():
            return fn()
        return asyncio.run_coroutine_threadsafe(run(), self.loop).result()

    async def run(self, coro) -> Any:
        """Await `coro` run in the engine loop. Cancelling the caller cancels it there too."""
        future = asyncio.run_coroutine_threadsafe(coro, self.loop)
        try:
            return await asyncio.wrap_future(future)
        except asyncio.CancelledError:
            future.cancel()  # wrap_future passes the cancel on already; this says so
            raise

    def close(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(timeout=5)


class VLLMGenerator(_LocalGenerator):
    """vLLM's online engine (`AsyncLLM`) in this process: concurrent `generate` calls are
    in the engine together and decoded in one continuous batch. Decoding is constrained to the
    claim JSON schema (`settings.structured`). The prompt is the tokenizer's chat template,
    tokenized here so that it is counted and fitted exactly, and handed to the engine as ids.

    Each request has its own id. One that runs past `settings.request_timeout_s`, fails, or
    whose caller is cancelled (a Serve request past its deadline, a client gone) is aborted in
    the engine, so its batch slot and KV cache are freed at once; a timeout or failure is a
    GenerationError, which the orchestrator turns into a refusal (generator_failed).

    `engine_factory(settings, model_path)` builds the engine (default `vllm_async_engine`); it
    runs inside the generator's engine loop."""

    def __init__(self, settings: LocalLLMSettings,
                 engine_factory: Callable[[LocalLLMSettings, str], Any] | None = None):
        try:
            import vllm
            from vllm import sampling_params as vllm_sampling
            from transformers import AutoTokenizer
        except ImportError as e:
            raise ConfigError("generator backend 'vllm' needs vLLM, from the `gpu` extra: pip install -e '.[gpu]' "
                              "(or use backend 'transformers' for small models on CPU)") from e
        self.settings = settings
        self.name = f"vllm/{settings.model}"
        self._vllm = vllm
        self._sampling = vllm_sampling
        self._schema = claim_json_schema() if settings.structured else None
        self._answer_params = self._params(schema=self._schema)  # a bad vLLM fails at start-up, not per request
        self._stream_params = self._params(schema=self._schema, stream=True)
        self._rewrite_params = self._params(max_tokens=REWRITE_MAX_TOKENS, greedy=True)
        path = str(resolve_model(settings.model, "generator"))
        self.tokenizer = AutoTokenizer.from_pretrained(path, local_files_only=True)
        self.count_tokens = token_counter(self.tokenizer)
        self._lock = threading.Lock()  # the tokenizer only: generation runs concurrently in the engine
        factory = engine_factory or vllm_async_engine
        self._loop = _EngineLoop(name=f"saksi-vllm-{settings.model}")
        try:
            self.engine = self._loop.call(lambda: factory(settings, path))
        except BaseException:
            self._loop.close()
            raise
        self.context_window = _engine_max_len(self.engine) or settings.max_model_len

    def _params(self, **kwargs):
        return self._vllm.SamplingParams(**vllm_sampling_kwargs(self.settings, self._sampling, **kwargs))

    async def _abort(self, request_id: str) -> None:
        try:
            await self.engine.abort(request_id)
        except Exception as e:  # noqa: BLE001 — the request is failing already; say so, keep its error
            log.warning("%s could not abort request %s: %s", self.name, request_id, e)

    async def _submit(self, ids: list[int], params) -> tuple[str, str]:
        """Runs in the engine loop: the request's final output, aborted on timeout, failure
        or cancellation."""
        request_id = f"saksi-{uuid.uuid4().hex}"
        timeout = self.settings.request_timeout_s
        final = None
        try:
            async with asyncio.timeout(timeout):
                async for out in self.engine.generate({"prompt_token_ids": ids}, params, request_id):
                    final = out
        except TimeoutError:
            await self._abort(request_id)
            raise GenerationError(f"{self.name} did not finish within {timeout:g} s (request_timeout_s); "
                                  "the request was aborted") from None
        except asyncio.CancelledError:
            await self._abort(request_id)
            raise
        except Exception as e:
            await self._abort(request_id)
            raise GenerationError(f"{self.name} failed to generate: {e}") from e
        if final is None:
            raise GenerationError("vLLM returned no output for the request")
        return vllm_output_text(final)

    def _fit(self, request: GenerationRequest) -> tuple[Prompt, list[int]]:
        s = self.settings
        with self._lock:
            return fit_prompt(request, s.context_tokens, self.count_tokens,
                              lambda m: chat_prompt_ids(self.tokenizer, m), self.context_window, s.max_tokens)

    async def generate(self, request: GenerationRequest) -> GenerationOutput:
        prompt, ids = await asyncio.to_thread(self._fit, request)
        text, finish = await self._loop.run(self._submit(ids, self._answer_params))
        return GenerationOutput(raw=text, model=self.name, finish_reason=finish, context_cut=prompt.cut)

    async def stream(self, request: GenerationRequest) -> AsyncIterator[str | GenerationOutput]:
        """The output as the engine writes it (`verification.StreamingGenerator`): each step's new text, then the
        output. The request runs in the engine loop under the same deadline and aborts as `generate`'s; a caller that
        stops listening (cancelled, a client gone) aborts it there too."""
        prompt, ids = await asyncio.to_thread(self._fit, request)
        caller = asyncio.get_running_loop()
        steps: asyncio.Queue = asyncio.Queue()

        def put(kind: str, item: Any) -> None:
            caller.call_soon_threadsafe(steps.put_nowait, (kind, item))

        async def produce() -> None:  # in the engine loop
            request_id = f"saksi-{uuid.uuid4().hex}"
            timeout = self.settings.request_timeout_s
            try:
                async with asyncio.timeout(timeout):
                    async for out in self.engine.generate({"prompt_token_ids": ids}, self._stream_params, request_id):
                        put("step", out)
                put("end", None)
            except TimeoutError:
                await self._abort(request_id)
                put("error", GenerationError(f"{self.name} did not finish within {timeout:g} s (request_timeout_s); "
                                             "the request was aborted"))
            except asyncio.CancelledError:
                await self._abort(request_id)
                raise
            except Exception as e:
                await self._abort(request_id)
                put("error", GenerationError(f"{self.name} failed to generate: {e}"))

        running = asyncio.run_coroutine_threadsafe(produce(), self._loop.loop)
        written, final = "", None
        try:
            while True:
                kind, item = await steps.get()
                if kind == "error":
                    raise item
                if kind == "end":
                    break
                final = item
                outputs = getattr(item, "outputs", None)
                text = (outputs[0].text or "") if outputs else ""
                if text.startswith(written) and len(text) > len(written):
                    yield text[len(written):]
                    written = text
        finally:
            if not running.done():
                running.cancel()  # the engine loop aborts the request
        if final is None:
            raise GenerationError("vLLM returned no output for the request")
        text, finish = vllm_output_text(final)
        yield GenerationOutput(raw=text, model=self.name, finish_reason=finish, context_cut=prompt.cut)

    def _rewrite_ids(self, messages: list[dict[str, str]]) -> list[int] | None:
        with self._lock:
            ids = chat_prompt_ids(self.tokenizer, messages)
        if self.context_window and len(ids) + REWRITE_MAX_TOKENS > self.context_window:
            return None
        return ids

    async def _model_rewrite(self, messages: list[dict[str, str]], original: str) -> str | None:
        """The model's one-line rewrite in the engine (greedy, short, unconstrained), or None."""
        try:
            ids = await asyncio.to_thread(self._rewrite_ids, messages)
            if ids is None:
                return None
            text, _ = await self._loop.run(self._submit(ids, self._rewrite_params))
        except Exception as e:  # noqa: BLE001 — a failed rewrite falls back to the rules, never fails the request
            log.warning("%s could not rewrite: %s", self.name, e)
            return None
        return parse_rewrite(text, original)

    def close(self) -> None:
        """Shut the engine down and stop its loop (tests, `saksi doctor`; a Serve replica just exits)."""
        shutdown = getattr(self.engine, "shutdown", None)
        if callable(shutdown):
            shutdown()
        self._loop.close()
