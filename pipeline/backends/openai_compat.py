"""A generator over any OpenAI-compatible chat endpoint (`vllm serve`, Ray Serve LLM, …).

Decoding is constrained to the claim JSON schema (`response_format: json_schema`, which
vLLM implements with structured outputs), temperature 0 and a fixed seed, and every other
sampling parameter is sent explicitly (`_body`). Greedy decoding with a seed is repeatable on
the same hardware, vLLM version and batch composition only: vLLM does not promise identical
bytes across batches unless batch invariance is arranged, so a trace is reproduced by
replaying its recorded output (`saksi replay`), not by asking again. Whatever comes back goes to the gates as text: a truncated answer
(`finish_reason == "length"`), invalid JSON or off-schema output becomes a refusal saying
so (pipeline/claims.py); a failed call raises GenerationError, which the orchestrator turns
into a refusal. Nothing the model writes is displayed without passing the gates.
"""
from __future__ import annotations

import asyncio
import json
import os
import threading
import urllib.error
import urllib.request
from typing import AsyncIterator

from ..claims import claim_json_schema
from ..config import OpenAICompatSettings
from ..errors import GenerationError
from ..prompts import build_prompt
from ..types import GenerationOutput, GenerationRequest


class OpenAICompatGenerator:
    def __init__(self, settings: OpenAICompatSettings):
        self.settings = settings
        self.name = f"openai-compat/{settings.model}"

    def _body(self, messages: list[dict]) -> dict:
        """Every sampling parameter said, none left to the server: `vllm serve` fills a parameter a
        request omits from the model's generation_config.json, which for Qwen2.5-Instruct holds a
        repetition penalty (1.05), and a penalty on repeating the prompt's tokens works against
        copying quotes verbatim. With `vllm_params` (the endpoint is vLLM: `vllm serve`, Ray Serve
        LLM) vLLM's own parameters go too: repetition_penalty 1.0, and structured output without
        free whitespace (JSON-constrained decoding can otherwise emit whitespace up to max_tokens;
        vLLM issues #38696, #21026). The schema's limits bound the rest (pipeline/claims.py)."""
        s = self.settings
        body = {"model": s.model, "messages": messages, "temperature": s.temperature, "seed": s.seed,
                "max_tokens": s.max_tokens, "top_p": 1.0, "frequency_penalty": 0.0, "presence_penalty": 0.0}
        if s.vllm_params:
            body["repetition_penalty"] = 1.0
        if s.structured:
            body["response_format"] = {"type": "json_schema",
                                       "json_schema": {"name": "claims", "schema": claim_json_schema(),
                                                       "strict": True}}
            if s.vllm_params:  # vLLM merges the response_format's schema into these options
                body["structured_outputs"] = {"disable_any_whitespace": True}
        return body

    def _post(self, body: dict) -> dict:
        s = self.settings
        try:
            with self._open(body) as r:
                return json.loads(r.read())
        except (TimeoutError, OSError) as e:
            raise GenerationError(f"cannot reach {s.base_url}: {e}") from None
        except json.JSONDecodeError:
            raise GenerationError(f"{s.base_url} did not answer with JSON") from None

    def _open(self, body: dict):
        """The endpoint's response, open for reading (a GenerationError when it cannot be had)."""
        s = self.settings
        headers = {"Content-Type": "application/json"}
        if s.api_key_env and os.environ.get(s.api_key_env):
            headers["Authorization"] = f"Bearer {os.environ[s.api_key_env]}"
        req = urllib.request.Request(s.base_url.rstrip("/") + "/chat/completions", method="POST",
                                     data=json.dumps(body).encode("utf-8"), headers=headers)
        try:
            return urllib.request.urlopen(req, timeout=s.timeout_s)
        except urllib.error.HTTPError as e:
            detail = e.read()[:300].decode("utf-8", errors="replace")
            raise GenerationError(f"{s.base_url} answered {e.code}: {detail}") from None
        except (urllib.error.URLError, TimeoutError, OSError) as e:
            raise GenerationError(f"cannot reach {s.base_url}: {e}") from None

    async def stream(self, request: GenerationRequest) -> AsyncIterator[str | GenerationOutput]:
        """The answer as the endpoint streams it (`stream: true`, server-sent `data:` chunks until `[DONE]`): each
        chunk's `delta.content` as it comes, then the output (`verification.StreamingGenerator`). The reading runs in
        a worker thread; a chunk that is not JSON, or a stream that ends without a finish reason, is a
        GenerationError (what was written before it still counts: pipeline/verification.py)."""
        prompt = build_prompt(request, self.settings.context_tokens)
        body = {**self._body(prompt.messages), "stream": True}
        caller = asyncio.get_running_loop()
        pieces: asyncio.Queue = asyncio.Queue()
        stop = threading.Event()

        def read() -> None:
            def put(kind, item):
                caller.call_soon_threadsafe(pieces.put_nowait, (kind, item))
            try:
                model, finish = self.settings.model, None
                with self._open(body) as r:
                    for line in r:
                        if stop.is_set():
                            return
                        line = line.decode("utf-8", errors="replace").strip()
                        if not line.startswith("data:"):
                            continue
                        data = line[5:].strip()
                        if data == "[DONE]":
                            break
                        chunk = json.loads(data)
                        model = str(chunk.get("model") or model)
                        for choice in chunk.get("choices") or []:
                            text = (choice.get("delta") or {}).get("content")
                            if text:
                                put("text", text)
                            finish = choice.get("finish_reason") or finish
                if finish is None:
                    raise GenerationError(f"{self.settings.base_url}'s stream ended without a finish reason")
                put("end", (model, str(finish)))
            except GenerationError as e:
                put("error", e)
            except (ValueError, OSError, TimeoutError) as e:
                put("error", GenerationError(f"{self.settings.base_url}'s stream broke off: {e}"))

        worker = asyncio.get_running_loop().run_in_executor(None, read)
        written = []
        try:
            while True:
                kind, item = await pieces.get()
                if kind == "text":
                    written.append(item)
                    yield item
                elif kind == "error":
                    raise item
                else:
                    model, finish = item
                    break
        finally:
            stop.set()
        await worker
        yield GenerationOutput(raw="".join(written), model=model, finish_reason=finish, context_cut=prompt.cut)

    async def generate(self, request: GenerationRequest) -> GenerationOutput:
        prompt = build_prompt(request, self.settings.context_tokens)
        reply = await asyncio.to_thread(self._post, self._body(prompt.messages))
        try:
            choice = reply["choices"][0]
            content = choice["message"]["content"] or ""
            finish = choice.get("finish_reason") or "stop"
        except (KeyError, IndexError, TypeError):
            raise GenerationError("the endpoint's reply has no choices[0].message.content") from None
        return GenerationOutput(raw=content, model=str(reply.get("model") or self.settings.model),
                                finish_reason=str(finish), context_cut=prompt.cut)
