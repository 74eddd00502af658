"""The JSON API's routes (versioned under /v1): a thin router over `serve.service.Service`, which owns what a
request may do. The app that serves them, its middlewares and its error shape are in serve/http_app.py, the
deployment that hosts it in serve/ingress.py; the request bodies are in serve/schemas.py, and every response
is a model of `pipeline/responses.py`, so the OpenAPI schema documents exactly what is sent.

A route that acts on one collection is declared once (`in_collection`) and answers at two paths:
`/v1/collections/{name}/…` for that collection, and the path without the prefix (from before
collections) for "default". A question that runs past the deadline is answered with a refusal (reason
`timeout`), never with an unverified answer.
"""
# no `from __future__ import annotations` here: FastAPI must see the real types of the parameters
import inspect
from typing import Annotated

from fastapi import APIRouter, Depends
from fastapi import Path as PathParam
from fastapi import Request
from fastapi.responses import JSONResponse, StreamingResponse

from pipeline import __version__
from pipeline.corpus import DEFAULT_COLLECTION
from pipeline.keys import COLLECTION_NAME, ApiKey
from pipeline.responses import (CollectionsResponse, CorpusResponse, DeleteResponse, ErrorResponse, Health,
                                IngestResponse, KeyCreated, KeyInfo, KeysResponse, Readiness, ReplayResponse)
from pipeline.trace import Trace

from .auth import caller
from .chat import ChatCompletions, ChatRequest, answer_sse, models, sse
from .schemas import (TRACE_ID, AnswerRequest, AnswerWithTrace, CollectionAnswerRequest, IngestRequest, KeyRequest,
                      ReplayRequest)
from .service import Service

router = APIRouter()
SSE = "text/event-stream"
NO_BUFFER = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}  # each event as it is decided, not batched by a proxy
ERRORS = {code: {"model": ErrorResponse} for code in (400, 401, 403, 404, 413, 422, 429, 503)}

Caller = Annotated[ApiKey, Depends(caller)]
Named = Annotated[str, PathParam(pattern=COLLECTION_NAME, description="a collection's name")]
Default = Annotated[str, Depends(lambda: DEFAULT_COLLECTION)]  # the route without the prefix
TraceId = Annotated[str, PathParam(pattern=TRACE_ID)]
DocId = Annotated[str, PathParam(min_length=1, max_length=200, pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]*$")]


def service(request: Request) -> Service:
    return request.app.state.service


Svc = Annotated[Service, Depends(service)]


def in_collection(method: str, path: str, summary: str, named_summary: str, named_body=None, **options):
    """One declaration, two routes: `/v1<path>` for the collection "default" and `/v1/collections/{name}<path>`
    for the collection in the path. The endpoint takes `name: Default`; its twin is the same function with `name`
    as the path's parameter (and `named_body` for `body` where the two bodies differ)."""
    def register(endpoint):
        getattr(router, method)("/v1" + path, summary=summary, **options)(endpoint)
        sig = inspect.signature(endpoint)
        swap = {"name": Named, **({"body": named_body} if named_body else {})}
        params = [p.replace(annotation=swap.get(p.name, p.annotation)) for p in sig.parameters.values()]

        async def named(**kwargs):
            return await endpoint(**kwargs)
        named.__signature__ = sig.replace(parameters=params)
        named.__name__ = named.__qualname__ = endpoint.__name__ + "_in"
        getattr(router, method)("/v1/collections/{name}" + path, summary=named_summary, **options)(named)
        return endpoint
    return register


@router.get("/healthz", response_model=Health, summary="the ingress process is alive (no key needed)")
async def healthz() -> Health:
    return Health(status="ok", version=__version__)


@router.get("/readyz", response_model=Readiness, responses={**ERRORS, 503: {"model": Readiness}},
         summary="ready when every deployment answers and the indexes are loaded")
async def readyz(svc: Svc, key: Caller):
    status = await svc.readiness()
    return JSONResponse(status.model_dump(mode="json"), status_code=200 if status.ready else 503)


@router.get("/v1/collections", response_model=CollectionsResponse, responses=ERRORS,
         summary="the collections this key may use")
async def collections(svc: Svc, key: Caller) -> CollectionsResponse:
    return CollectionsResponse(collections=svc.collections_for(key))


@in_collection("post", "/answer", response_model=AnswerWithTrace, named_body=CollectionAnswerRequest,
               responses={**ERRORS, 200: {"content": {SSE: {"description": "with stream: true"}}}},
               summary="answer with receipts, or refuse saying what is missing (collection: the body's, or default)",
               named_summary="answer from this collection only")
async def answer(name: Default, body: AnswerRequest, svc: Svc, key: Caller) -> AnswerWithTrace:
    where = svc.where(key, getattr(body, "collection", name))
    if body.stream:
        return StreamingResponse(answer_sse(svc.answer_stream(where, body)), media_type=SSE, headers=NO_BUFFER)
    return await svc.answer(where, body)


@router.get("/v1/models", responses=ERRORS, summary="OpenAI-compatible: the models this key may ask (one per collection)")
async def list_models(svc: Svc, key: Caller) -> dict:
    return models(svc, key)


@router.post("/v1/chat/completions", responses=ERRORS,
             summary="OpenAI-compatible chat: the last user message answered with receipts (stream: SSE chunks)")
async def chat_completions(body: ChatRequest, request: Request, svc: Svc, key: Caller):
    chat = ChatCompletions(svc, key, body, str(request.base_url))
    if body.stream:
        return StreamingResponse(sse(await chat.stream()), media_type=SSE, headers=NO_BUFFER)
    return await chat.complete()


@in_collection("get", "/traces/{trace_id}", response_model=Trace, responses=ERRORS,
               summary="a trace of the default collection, as written for the answer it explains",
               named_summary="a trace of this collection")
async def get_trace(name: Default, trace_id: TraceId, svc: Svc, key: Caller) -> Trace:
    return await svc.read_trace(svc.where(key, name), trace_id)


@in_collection("post", "/replay", response_model=ReplayResponse, responses=ERRORS,
               summary="re-run the gates on a trace's recorded generator output; same decision?",
               named_summary="replay a trace of this collection")
async def replay(name: Default, body: ReplayRequest, svc: Svc, key: Caller) -> ReplayResponse:
    return await svc.replay(svc.where(key, name), body.trace_id)


@in_collection("get", "/corpus", response_model=CorpusResponse, responses=ERRORS,
               summary="what the default collection holds: documents, chunks, readiness",
               named_summary="what this collection holds")
async def corpus(name: Default, svc: Svc, key: Caller) -> CorpusResponse:
    return await svc.coverage(svc.where(key, name))


@in_collection("post", "/ingest", response_model=IngestResponse, responses=ERRORS,
               summary="ingest a few small files into the default collection (curator)",
               named_summary="ingest a few small files into this collection, creating it (curator)")
async def ingest(name: Default, body: IngestRequest, svc: Svc, key: Caller) -> IngestResponse:
    return await svc.ingest(svc.where(key, name, "curator", create=True), body.files)


@in_collection("delete", "/documents/{doc_id}", response_model=DeleteResponse, responses=ERRORS,
               summary="take a document out of the default collection (curator)",
               named_summary="take a document out of this collection (curator)")
async def delete(name: Default, doc_id: DocId, svc: Svc, key: Caller) -> DeleteResponse:
    return await svc.delete(svc.where(key, name, "curator"), doc_id)


@router.get("/v1/keys", response_model=KeysResponse, responses=ERRORS, summary="every key, without secrets (admin)")
async def keys(svc: Svc, key: Caller) -> KeysResponse:
    return svc.list_keys(key)


@router.post("/v1/keys", response_model=KeyCreated, responses=ERRORS,
          summary="create a key; its token is in this response only (admin)")
async def create_key(body: KeyRequest, svc: Svc, key: Caller) -> KeyCreated:
    return svc.create_key(key, body)


@router.delete("/v1/keys/{key_id}", response_model=KeyInfo, responses=ERRORS, summary="revoke a key (admin)")
async def revoke_key(key_id: Annotated[str, PathParam(pattern=r"^[0-9a-f]{12}$")], svc: Svc, key: Caller) -> KeyInfo:
    return svc.revoke_key(key, key_id)
