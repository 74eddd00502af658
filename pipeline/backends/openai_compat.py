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
import urllib.error
import urllib.request

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
        headers = {"Content-Type": "application/json"}
        if s.api_key_env and os.environ.get(s.api_key_env):
            headers["Authorization"] = f"Bearer {os.environ[s.api_key_env]}"
        req = urllib.request.Request(s.base_url.rstrip("/") + "/chat/completions", method="POST",
                                     data=json.dumps(body).encode("utf-8"), headers=headers)
        try:
            with urllib.request.urlopen(req, timeout=s.timeout_s) as r:
                return json.loads(r.read())
        except urllib.error.HTTPError as e:
            detail = e.read()[:300].decode("utf-8", errors="replace")
            raise GenerationError(f"{s.base_url} answered {e.code}: {detail}") from None
        except (urllib.error.URLError, TimeoutError, OSError) as e:
            raise GenerationError(f"cannot reach {s.base_url}: {e}") from None
        except json.JSONDecodeError:
            raise GenerationError(f"{s.base_url} did not answer with JSON") from None

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
