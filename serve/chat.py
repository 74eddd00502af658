"""The OpenAI-compatible face of saksi: `POST /v1/chat/completions` and `GET /v1/models`, for the chat front ends
teams already run (Open WebUI, LibreChat, anything on the OpenAI SDK). Plain Python over `serve.service.Service`:
the same keys, roles, limits, audit entries and traces as `/v1/answer`.

- The model names the collection: `saksi` is "default", `saksi:<name>` any other, and a key lists only those it may
  read (`GET /v1/models`).
- The question is the last user message; a follow-up that leans on the turn before it is made standalone
  (`pipeline.followup`), and the answer says which question it answered.
- The receipts survive whatever the client reads: the Markdown content carries each claim with `[n]` markers and a
  numbered list of receipts (citation path, title, pages, band, the exact quote; the refusal with its reasons and
  nearest records); top-level `citations` link each receipt to the page's evidence view; `saksi` carries the full
  answer JSON and the trace id. Streamed, each claim's text is sent only once its gates have passed and nothing can
  withhold it (`pipeline/release.py`), followed by an Open WebUI `source` event with its exact quote and a
  `delta.annotations` url_citation; claims the gates demote are never sent as content: a collapsed "not supported"
  section closes the answer.
- Sampling parameters cannot change a verified answer (saksi quotes; it does not sample): temperature, top_p,
  max_tokens and the like are accepted and listed as ignored in the `saksi` object, and so are tools a client offers
  (Open WebUI sends its own): saksi never calls one. What would change the contract is refused with a 400 naming the
  field: a tool call demanded (tool_choice), n > 1, a response_format other than text, logprobs, a message that is
  not text.
"""
from __future__ import annotations

import json
import re
import time
from typing import Any, AsyncIterator, Literal
from urllib.parse import urlencode

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from pipeline.corpus import DEFAULT_COLLECTION
from pipeline.decision import ONLY_HISTORY, category_words
from pipeline.followup import Standalone, standalone
from pipeline.keys import COLLECTION_NAME, ApiKey
from pipeline.responses import Claim
from pipeline.status import standing_words

from .errors import ApiError
from .schemas import AnswerRequest
from .service import Service

MODEL = "saksi"
IGNORED = ("temperature", "top_p", "max_tokens", "max_completion_tokens", "seed", "presence_penalty",
           "frequency_penalty", "stop", "user", "stream_options", "top_k", "min_p", "repetition_penalty",
           "reasoning_effort", "metadata", "store", "parallel_tool_calls", "logit_bias", "top_logprobs")


class ChatMessage(BaseModel):
    model_config = ConfigDict(extra="allow", strict=True)
    role: str
    content: str | list[dict[str, Any]] | None = None


class ChatRequest(BaseModel):
    """An OpenAI Chat Completions request. Fields other than these are accepted, ignored and listed as such."""

    model_config = ConfigDict(extra="allow", strict=True)  # no coercion (`"stream": "yes"` is refused), as /v1/answer
    model: str = Field(..., max_length=80, description="`saksi` (the default collection) or `saksi:<collection>`")
    messages: list[ChatMessage] = Field(..., min_length=1, max_length=200)
    stream: bool = False
    lang: Literal["id", "en"] | None = Field(None, description="saksi: labels of the answer (default: the question's)")
    as_of: str | None = Field(None, pattern=r"^\d{4}-\d{2}-\d{2}$", description="saksi: answer as of this date")


def collection_of(model: str) -> str:
    """The collection a model id names: `saksi` → default, `saksi:<name>` → name; anything else is a 404."""
    if model == MODEL:
        return DEFAULT_COLLECTION
    name = model[len(MODEL) + 1:] if model.startswith(MODEL + ":") else ""
    if re.fullmatch(COLLECTION_NAME, name):
        return name
    raise ApiError(404, "model_not_found", f"no model {model!r}: saksi's models are `saksi` (the default collection) "
                                           "and `saksi:<collection>` (GET /v1/models lists them)")


def model_of(collection: str) -> str:
    return MODEL if collection == DEFAULT_COLLECTION else f"{MODEL}:{collection}"


def models(svc: Service, key: ApiKey) -> dict:
    """The models this key may ask: one per collection it may read."""
    return {"object": "list", "data": [{"id": model_of(c), "object": "model", "created": 0, "owned_by": "saksi"}
                                       for c in svc.collections_for(key)]}


def _text(m: ChatMessage, i: int) -> str:
    if m.content is None:
        return ""
    if isinstance(m.content, str):
        return m.content
    texts = []
    for part in m.content:
        if part.get("type") != "text":
            raise ApiError(400, "unsupported_parameter", f"messages[{i}].content: only text parts can be asked "
                                                         f"(got {part.get('type')!r})")
        if not isinstance(part.get("text"), str):
            raise ApiError(422, "invalid_request", f"messages[{i}].content: a text part needs its `text`, a string")
        texts.append(part["text"])
    return "\n".join(texts)


def checked(body: ChatRequest) -> tuple[list[str], list[str]]:
    """The user questions, oldest first, and the fields ignored; 400 naming a field that would change the contract."""
    extra = body.model_extra or {}
    for name in ("tool_choice", "function_call"):  # tools offered are ignored (never called); one demanded is not
        if extra.get(name) not in (None, "none", "auto"):
            raise ApiError(400, "unsupported_parameter", f"{name}: saksi calls no tools; it answers from its records "
                                                         "with exact quotes")
    if extra.get("n") not in (None, 1):
        raise ApiError(400, "unsupported_parameter", "n: saksi gives one answer per question")
    fmt = extra.get("response_format")
    if fmt not in (None, {"type": "text"}):
        raise ApiError(400, "unsupported_parameter", "response_format: the answer is Markdown with receipts; its JSON "
                                                     "is in the response's `saksi` object")
    for name in ("logprobs", "audio", "modalities", "prediction"):
        if extra.get(name) not in (None, False, ["text"]):
            raise ApiError(400, "unsupported_parameter", f"{name}: not available from saksi")
    if body.messages[-1].role != "user":
        raise ApiError(400, "invalid_request", "messages: the last message must be the user's question")
    questions = [_text(m, i) for i, m in enumerate(body.messages) if m.role == "user"]
    if not questions[-1].strip():
        raise ApiError(422, "invalid_request", "messages: the last user message is empty")
    ignored = sorted(extra)  # what is left cannot change the answer (the refused fields raised above)
    skipped = [f"messages[{i}] ({m.role})" for i, m in enumerate(body.messages) if m.role in ("system", "developer")]
    return questions, ignored + skipped


# -- words ----------------------------------------------------------------------------------------------------------

_W = {
    "id": {"asked": "Pertanyaan yang dijawab", "answer": "Jawaban", "sources": "Sumber", "page": "hlm.",
           "unsupported": "Tidak didukung", "refused": "Tidak ada jawaban yang dapat dikutip.",
           "missing": "Bukti yang tidak ditemukan", "nearest": "Catatan terdekat", "score": "skor",
           "conflicts": "Perhatian", "evidence": "buka bukti", "trace": "Jejak", "searching": "Mencari di koleksi",
           "found": "{n} catatan ditemukan; memeriksa klaim", "retry": "Mencari ulang dengan kueri lain",
           "done": "Selesai: {n} klaim didukung", "refusal": "Ditolak: tidak ada jawaban yang dapat dikutip"},
    "en": {"asked": "Question answered", "answer": "Answer", "sources": "Sources", "page": "p.",
           "unsupported": "Not supported", "refused": "No answer can be quoted.",
           "missing": "Evidence not found", "nearest": "Nearest records", "score": "score",
           "conflicts": "Note", "evidence": "open the evidence", "trace": "Trace", "searching": "Searching the collection",
           "found": "{n} records found; checking the claims", "retry": "Searching again with another query",
           "done": "Done: {n} supported claim(s)", "refusal": "Refused: no answer can be quoted"},
}


def words(lang: str) -> dict[str, str]:
    return _W["id" if lang == "id" else "en"]


class Receipts:
    """The receipts of an answer as the chat shows them: each unique citation of a supported claim numbered in the
    order it is first shown (the order Open WebUI numbers its sources in), with its link to the evidence view."""

    def __init__(self, base_url: str, collection: str, trace_id: str | None = None):
        self.base, self.collection, self.trace_id = base_url.rstrip("/"), collection, trace_id
        self.numbers: dict[tuple[str, str], int] = {}
        self.sources: list[dict] = []

    def url(self, c: dict) -> str:
        query = {"chunk": c["chunk_id"], "quote": c["quote"], **({"from": self.trace_id} if self.trace_id else {})}
        return f"{self.base}/ui/documents/{self.collection}/{c['doc_id']}/text?{urlencode(query)}#hl"

    def cite(self, claim: dict) -> tuple[list[int], list[dict]]:
        """The claim's markers, and the receipts it adds (those not shown before)."""
        marks, new = [], []
        for c in claim["citations"]:
            k = (c["chunk_id"], c["quote"])
            if k not in self.numbers:
                self.numbers[k] = len(self.sources) + 1
                source = {"n": self.numbers[k], "citation": c, "claim": claim, "url": self.url(c)}
                self.sources.append(source)
                new.append(source)
            if self.numbers[k] not in marks:
                marks.append(self.numbers[k])
        return marks, new


def claim_line(claim: dict, marks: list[int], lang: str) -> str:
    line = quoted(claim["text"]) + " " + "".join(f"[{n}]" for n in marks)
    st = claim.get("standing")
    if st and st["state"] != "in_force":
        line += f" *({standing_words(Claim.model_validate(claim).standing, lang, brief=True)})*"
    return line


def quoted(text: str) -> str:
    """A record's words as one Markdown line that renders as written: a leading "19." or "-" is not made a list, and
    what would read as an HTML tag ("<a href=…>" in an uploaded record) is shown as text, not rendered."""
    line = re.sub(r"<(?=[A-Za-z/!?])", "&lt;", " ".join(text.split()))
    return re.sub(r"^(\d+)\.(\s)|^([-*+#>])", lambda m: f"{m[1]}\\.{m[2]}" if m[1] else f"\\{m[3]}", line)


def receipt_line(source: dict, lang: str) -> str:
    """`n. **path** — title, p. 4 — TINGGI 0.91` and the exact quote below it, with the link to the evidence."""
    W, c, claim = words(lang), source["citation"], source["claim"]
    path = c.get("path") or f"{c.get('document')}, {c.get('location')}"
    pages = c.get("pages")
    where = f", {W['page']} {pages[0]}" + (f"–{pages[1]}" if pages[1] != pages[0] else "") if pages else ""
    band = f" — {claim['band']} {claim['confidence']:.2f}" if claim.get("band") else ""
    quote = quoted(c["quote"])
    return (f"{source['n']}. **{path}** — {c.get('document') or ''}{where}{band} — [{W['evidence']}]({source['url']})\n"
            f"   > {quote}")


def sources_section(sources: list[dict], lang: str) -> str:
    """The numbered sources under the claims, each with its receipt."""
    return f"**{words(lang)['sources']}**\n\n" + "\n".join(receipt_line(s, lang) for s in sources)


def direct_line(answer: dict, first_source: list[int]) -> str:
    """The direct answer line; its [n] (the n-th supported claim) becomes that claim's first receipt's number."""
    text = re.sub(r"\[(\d+)\]", lambda m: f"[{first_source[int(m[1]) - 1]}]" if 0 < int(m[1]) <= len(first_source)
                  else m[0], answer["direct_answer"]["text"])
    return f"**{words(answer['lang'])['answer']}:** {text}"


def demoted_section(claims: list[dict], lang: str) -> str:
    W = words(lang)
    if not claims:
        return ""
    items = "\n".join(f"- {quoted(c['text'][:300])} — {quoted('; '.join(c['reasons'])[:300])}" for c in claims)
    return f"\n\n<details>\n<summary>{W['unsupported']} ({len(claims)})</summary>\n\n{items}\n\n</details>"


def refusal_text(answer: dict, lang: str) -> str:
    W = words(lang)
    out = [f"**{W['refused']}** {answer.get('reason') or ''}".strip()]
    if answer.get("missing_categories"):
        out.append(f"{W['missing']}: {', '.join(category_words(m, lang) for m in answer['missing_categories'])}.")
    if answer.get("nearest"):
        out.append(f"**{W['nearest']}**")
        for i, n in enumerate(answer["nearest"], 1):
            excerpt = quoted(n["text"][:300])
            out.append(f"{i}. {n.get('path') or n['document'] + ', ' + n['location']} — {n['document']} "
                       f"({W['score']} {n['score']:.2f})\n   > {excerpt}")
    return "\n\n".join(out)


def _history_shown(answer: dict) -> bool:
    """A refusal whose supported claims are shown, as the stream releases them: every part answered, or refused
    only because what it found is history on the answer's date (decision.ONLY_HISTORY)."""
    return any(c["status"] == "supported" for c in answer["claims"]) and all(
        p["answered"] or p["reason"] == ONLY_HISTORY for p in answer["parts"])


def markdown(answer: dict, asked: Standalone, base_url: str, collection: str) -> tuple[str, list[dict]]:
    """The whole answer as Markdown, and its receipts (numbered sources)."""
    lang = answer["lang"]
    W = words(lang)
    receipts = Receipts(base_url, collection, answer["trace_id"])
    head = [f"> {W['asked']}: *{asked.question}*"] if asked.rewritten else []
    if answer["outcome"] != "answer" and not _history_shown(answer):
        return "\n\n".join([*head, refusal_text(answer, lang)]) + demoted_section(
            [c for c in answer["claims"] if c["status"] != "supported"], lang), []
    lines, first_source = [], []
    for c in answer["claims"]:
        if c["status"] == "supported":
            marks, _ = receipts.cite(c)
            first_source.append(marks[0])
            lines.append(claim_line(c, marks, lang))
    body = [*head]
    if answer.get("direct_answer"):
        body.append(direct_line(answer, first_source))
    body.append("\n\n".join(lines))
    answered = answer["outcome"] == "answer"
    if not answered:  # history only: the claims, each with its standing, then why none of them answers
        body.append(refusal_text(answer, lang))
    if answered and answer.get("conflicts"):
        body.append("\n".join(f"**{W['conflicts']}:** {c['detail']}" for c in answer["conflicts"]))
    body.append(sources_section(receipts.sources, lang))
    text = "\n\n".join(body) + demoted_section([c for c in answer["claims"] if c["status"] != "supported"], lang)
    return text, receipts.sources


def _usage(question: str, content: str) -> dict:
    """Word counts (saksi has no tokenizer of the client's model; the fields are what clients expect)."""
    p, c = len(question.split()), len(content.split())
    return {"prompt_tokens": p, "completion_tokens": c, "total_tokens": p + c}


class ChatCompletions:
    def __init__(self, svc: Service, key: ApiKey, body: ChatRequest, base_url: str):
        self.svc, self.key, self.body, self.base = svc, key, body, base_url
        self.name = collection_of(body.model)
        self.where = svc.where(key, self.name)  # 403 before 404, as every route
        self.questions, self.ignored = checked(body)
        self.created = int(time.time())
        self.id = f"chatcmpl-{time.time_ns():x}"  # a streamed answer's (its trace id is known only at the end)

    async def _asked(self) -> Standalone:
        orch = await self.svc.orchestrator(self.where.collection)
        return await standalone(self.questions, self.svc.analyzer.language(self.questions[-1]),
                                orch.components.generator)

    def _request(self, asked: Standalone) -> AnswerRequest:
        try:
            return AnswerRequest(question=asked.question, lang=self.body.lang, as_of=self.body.as_of,
                                 collection=self.name)
        except ValidationError as e:  # the question made of the messages, or the date asked
            first = e.errors()[0]
            where = ".".join(str(x) for x in first["loc"]) or "messages"
            raise ApiError(422, "invalid_request", f"{'messages' if where == 'question' else where}: "
                                                   f"{first['msg']}") from None

    def _saksi(self, asked: Standalone, answer: dict | None) -> dict:
        return {"question": asked.question, "rewritten": asked.rewritten, "rewritten_by": asked.by,
                "follows": asked.follows, "collection": self.name, "ignored": self.ignored,
                "trace_id": answer["trace_id"] if answer else None, "answer": answer}

    async def complete(self) -> dict:
        """The whole answer at once (`stream: false`)."""
        asked = await self._asked()
        answer = (await self.svc.answer(self.where, self._request(asked))).model_dump(mode="json")
        content, sources = markdown(answer, asked, self.base, self.name)
        return {"id": f"chatcmpl-{answer['trace_id']}", "object": "chat.completion", "created": self.created,
                "model": self.body.model,
                "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop",
                             "logprobs": None}],
                "usage": _usage(asked.question, content), "citations": [s["url"] for s in sources],
                "saksi": self._saksi(asked, answer)}

    async def stream(self) -> AsyncIterator[dict]:
        """Chat completion chunks: status events while retrieving and verifying, each claim once it may be shown
        with its source event and url_citation, then the receipts, the demoted claims collapsed, and the final chunk
        (`finish_reason`, `usage`, `citations`, `saksi`). Admission errors are raised before the first chunk."""
        asked = await self._asked()
        events = self.svc.answer_stream(self.where, self._request(asked))
        return self._chunks(asked, events)

    def _chunk(self, delta: dict | None = None, finish: str | None = None, **extra) -> dict:
        choices = [{"index": 0, "delta": delta or {}, "finish_reason": finish, "logprobs": None}] \
            if delta is not None or finish else []
        return {"id": self.id, "object": "chat.completion.chunk", "created": self.created, "model": self.body.model,
                "choices": choices, **extra}

    def _status(self, text: str, done: bool = False) -> dict:
        return self._chunk(event={"type": "status", "data": {"description": text, "done": done}})

    async def _chunks(self, asked: Standalone, events: AsyncIterator[tuple[str, dict]]) -> AsyncIterator[dict]:
        lang = self.body.lang or self.svc.analyzer.language(asked.question)
        W = words(lang)
        receipts = Receipts(self.base, self.name)
        yield self._chunk({"role": "assistant", "content": ""})
        if asked.rewritten:
            yield self._chunk({"content": f"> {W['asked']}: *{asked.question}*\n\n"})
        yield self._status(W["searching"])
        first_source: list[int] = []
        sent = 0
        answer = None
        async for kind, data in events:
            if kind == "retrieval":
                yield self._status(W["found"].format(n=data["records"]))
            elif kind == "retry":
                yield self._status(W["retry"])
            elif kind == "claim":
                claim = data["claim"]
                marks, new = receipts.cite(claim)
                first_source.append(marks[0])
                yield self._chunk({"content": ("\n\n" if sent else "") + claim_line(claim, marks, lang),
                                   "annotations": [_annotation(s) for s in new]})
                for s in new:
                    yield self._chunk(event=_source_event(s))
                sent += 1
            elif kind == "done":  # the whole answer (a demoted claim is never content: it waits for this)
                answer = data["answer"]
            elif kind == "error":
                yield self._chunk({"content": f"\n\n**{data['error']['type']}**: {data['error']['message']}"},
                                  error=data["error"])
        if answer is None:
            yield self._chunk(finish="stop")
            return
        lang = answer["lang"]
        W = words(lang)
        tail = []
        if answer["outcome"] == "answer":
            if answer.get("direct_answer"):
                tail.append(direct_line(answer, first_source))
            if answer.get("conflicts"):
                tail.append("\n".join(f"**{W['conflicts']}:** {c['detail']}" for c in answer["conflicts"]))
        else:
            tail.append(refusal_text(answer, lang))
        if receipts.sources:  # an answer's, or a history-only refusal's: its claims were shown, as in `markdown`
            tail.append(sources_section(receipts.sources, lang))
        demoted = [c for c in answer["claims"] if c["status"] != "supported"]
        text = ("\n\n" if sent or asked.rewritten else "") + "\n\n".join(tail) + demoted_section(demoted, lang)
        yield self._chunk({"content": text})
        done = W["done"].format(n=sent) if answer["outcome"] == "answer" else W["refusal"]
        yield self._status(done, done=True)
        content_words = " ".join(c["text"] for c in answer["claims"] if c["status"] == "supported") + " " + text
        yield self._chunk(finish="stop", usage=_usage(asked.question, content_words),
                          citations=[s["url"] for s in receipts.sources], saksi=self._saksi(asked, answer))


def _annotation(source: dict) -> dict:
    c = source["citation"]
    return {"type": "url_citation", "url_citation": {"url": source["url"], "title": c.get("path") or c.get("document"),
                                                     "content": c["quote"]}}


def _source_event(source: dict) -> dict:
    """Open WebUI's source event: the receipt's name and link, and the exact quote as its document."""
    c = source["citation"]
    name = c.get("path") or f"{c.get('document')}, {c.get('location')}"
    return {"type": "source", "data": {"source": {"id": source["url"], "name": name, "url": source["url"]},
                                       "document": [c["quote"]],
                                       "metadata": [{"source": source["url"], "name": name}]}}


def sse(chunks: AsyncIterator[dict]) -> AsyncIterator[bytes]:
    """Server-sent events as OpenAI streams them: `data: <json>` per chunk, then `data: [DONE]`."""
    async def gen():
        async for chunk in chunks:
            yield f"data: {json.dumps(chunk, ensure_ascii=False)}\n\n".encode()
        yield b"data: [DONE]\n\n"
    return gen()


def answer_sse(events: AsyncIterator[tuple[str, dict]]) -> AsyncIterator[bytes]:
    """The native API's stream: `event: <kind>` and `data: <json>` per event."""
    async def gen():
        async for kind, data in events:
            yield f"event: {kind}\ndata: {json.dumps({'event': kind, **data}, ensure_ascii=False)}\n\n".encode()
    return gen()
