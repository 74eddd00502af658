"""The HTTP API (FastAPI, versioned under /v1) and the Ingress deployment that hosts it.

Request schemas first, then the error handlers, then the ingress. Every response is one of
the models in `pipeline/responses.py` (the same ones `saksi ask --json` prints), so the
OpenAPI schema documents exactly what is sent. The ingress builds the pipeline's
Components over deployment handles (serve/handles.py) and runs the one orchestrator from
`pipeline/`.

Every endpoint but `/healthz` needs `Authorization: Bearer <key>` (serve/auth.py; keys from
`saksi keys create`): 401 without a valid key, 403 outside the key's role or collections,
429 with `Retry-After` past its rate. A reader asks and reads traces; a curator also ingests
and deletes; an admin also manages keys. Routes under `/v1/collections/{name}/` address one
collection; the same routes without the prefix address the collection "default".

Errors are JSON `{"error": {"type", "message"}}` with a 4xx status for a bad request, 404
for what does not exist, 413 for an oversized upload, and 503 with `Retry-After` when the
service is overloaded or a component it needs is down. A question that runs past the
deadline is answered with a refusal (reason `timeout`), never with an unverified answer.
"""
# no `from __future__ import annotations` here: FastAPI must see the real types of the
# endpoint parameters through Serve's class-based ingress

import asyncio
import base64
import binascii
import datetime as dt
import logging
import math
import time
from typing import Annotated, Literal

from fastapi import Depends, FastAPI
from fastapi import Path as PathParam
from fastapi import Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator
from ray import serve
from ray.serve.handle import DeploymentHandle
from starlette.exceptions import HTTPException as StarletteHTTPException

from pipeline import __version__
from pipeline.audit import AuditLog
from pipeline.backends import make_generator, make_judge
from pipeline.analysis import query_analyzer
from pipeline.config import MAX_QUESTION_CHARS_CEILING, load_profile
from pipeline.corpus import DEFAULT_COLLECTION, DataDir
from pipeline.orchestrator import Components, Orchestrator
from pipeline.errors import KeyManagementError, QuestionRejected, TraceError, UnknownCollectionError
from pipeline.keys import COLLECTION_NAME, ApiKey, KeyStore
from pipeline.responses import (AnswerResponse, CollectionsResponse, CorpusResponse, DeleteResponse,
                                DeploymentReadiness, ErrorResponse, Health, IngestErrorOut, IngestResponse, KeyCreated,
                                KeyInfo, KeysResponse, Readiness, ReplayResponse, answer_relative)
from pipeline.limits import check_question
from pipeline.trace import Trace, load_trace

from .auth import ANSWER_ADMISSION, Authenticate, Guard, RateLimiter, answer_charge, caller, is_page, require
from .body_limit import BodyLimit, default_limits
from .errors import ApiError, within
from .config import RuntimeSettings
from .handles import HandleContext, HandleGenerator, HandleJudge, TimedJudge
from . import web
from .web.common import error_page

log = logging.getLogger(__name__)

TRACE_ID = r"^[0-9a-f]{32}$"

# --- request schemas ----------------------------------------------------------------------------


class _In(BaseModel):
    """Inputs are taken as the schema says: no unknown fields, no coercion (`0` is not `false`)."""

    model_config = ConfigDict(extra="forbid", strict=True)


class AnswerOptions(_In):
    include_trace: bool = Field(False, description="embed the full trace in the response")


class CollectionAnswerRequest(_In):
    """POST /v1/collections/{name}/answer: the collection is the path's."""

    question: str = Field(..., min_length=1, max_length=MAX_QUESTION_CHARS_CEILING, pattern=r"[^\s\x1c-\x1f]",
                          description="the question, Indonesian or English (not only whitespace or separators); "
                                      "the profile's "
                                      "limits.max_question_chars (default 500) is the real cap: longer is a 422 "
                                      "question_too_long")
    lang: Literal["id", "en"] | None = Field(None, description="labels of the answer (default: the question's)")
    as_of: str | None = Field(
        None, pattern=r"^\d{4}-\d{2}-\d{2}$", json_schema_extra={"format": "date"},
        description="answer as of this date (YYYY-MM-DD): each claim's provision is shown in force, or as history, on "
                    "it (default: a date the question names, else the profile's as_of, else today)")

    @field_validator("as_of")
    @classmethod
    def _a_calendar_date(cls, v: str | None) -> str | None:
        if v is not None:
            dt.date.fromisoformat(v)  # "2025-02-30" is no date: a 422 naming the field
        return v

    def as_of_date(self) -> dt.date | None:
        return dt.date.fromisoformat(self.as_of) if self.as_of else None
    options: AnswerOptions = AnswerOptions()


class AnswerRequest(CollectionAnswerRequest):
    """POST /v1/answer: the collection is the body's (default: "default")."""

    collection: str = Field("default", pattern=COLLECTION_NAME, description="the collection to ask")


class AnswerWithTrace(AnswerResponse):
    """The answer, and its trace when `options.include_trace` asked for it."""

    trace: Trace | None = None


class ReplayRequest(_In):
    trace_id: str = Field(..., pattern=TRACE_ID, description="32 lowercase hex characters")


BASE64 = r"^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$"


class UploadFile(_In):
    # the schema says what the validator below checks, so a client (or a fuzzer) can tell a body the server takes
    # from one it refuses: exactly one of `content` and `content_base64`, a string; a .pdf or .docx as bytes
    model_config = ConfigDict(json_schema_extra={
        "oneOf": [{"required": ["content"], "properties": {"content": {"type": "string"}},
                   "not": {"anyOf": [{"required": ["content_base64"]},
                                     {"properties": {"name": {"pattern": r"\.(pdf|docx)$"}}}]}},
                  {"required": ["content_base64"], "properties": {"content_base64": {"type": "string"}},
                   "not": {"required": ["content"]}}]})

    name: str = Field(..., pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]{0,120}\.(md|markdown|txt|pdf|html|htm|docx)$",
                      description="file name; .md, .markdown, .txt, .pdf, .html, .htm or .docx")
    content: str | None = Field(None, description="UTF-8 text (Markdown, text, HTML), optionally with YAML "
                                                  "front matter")
    content_base64: str | None = Field(None, pattern=BASE64,
                                       description="the file's bytes, base64 (PDF, DOCX, or any format)")

    @model_validator(mode="after")
    def _one_content(self) -> "UploadFile":
        if (self.content is None) == (self.content_base64 is None):
            raise ValueError("give exactly one of content (text) or content_base64 (bytes)")
        if self.content_base64 is not None:
            try:
                base64.b64decode(self.content_base64, validate=True)
            except binascii.Error as e:
                raise ValueError(f"content_base64 is not valid base64: {e}") from None
        elif self.name.lower().endswith((".pdf", ".docx")):
            raise ValueError(f"{self.name} is binary: send it as content_base64")
        return self

    def data(self) -> bytes:
        return base64.b64decode(self.content_base64) if self.content_base64 is not None else self.content.encode()


class IngestRequest(_In):
    files: list[UploadFile] = Field(..., min_length=1, max_length=50)


class KeyRequest(_In):
    role: Literal["reader", "curator", "admin"]
    collections: list[Annotated[str, Field(pattern=COLLECTION_NAME + "|^[*]$")]] = Field(
        ["default"], min_length=1, max_length=100, description="collections the key may use; '*': all")
    authority: Literal["official", "primary", "institutional", "academic", "media", "unknown"] = Field(
        "unknown", description="the highest authority the key's uploads may claim")
    name: str = Field("", max_length=200, description="whose key it is")


# --- errors -------------------------------------------------------------------------------------


ERRORS = {code: {"model": ErrorResponse} for code in (400, 401, 403, 404, 413, 422, 429, 503)}

app = FastAPI(title="saksi", version=__version__,
              description="Answers with exact quotes from the ingested records, or refuses and says what is missing. "
                          "Every endpoint but /healthz needs `Authorization: Bearer <key>` (`saksi keys create`).")
# both act on the headers alone, before anything reads the body: the key first (outermost), then
# the body's size; the ingress puts its Guard and limits on app.state when it starts
app.state.body_limits = default_limits(RuntimeSettings().max_upload_bytes)
app.add_middleware(BodyLimit, limit_for=lambda method, path: app.state.body_limits(method, path))
app.add_middleware(Authenticate, guard=lambda: app.state.guard)
web.install(app)  # the reviewer's page at / and /ui/ (serve/web/)


def _error(status: int, kind: str, message: str, headers: dict[str, str] | None = None) -> JSONResponse:
    return JSONResponse({"error": {"type": kind, "message": message}}, status_code=status, headers=headers)


@app.exception_handler(ApiError)
async def _api_error(request: Request, e: ApiError):
    """The error shape; on the web page's paths, the same error as a page (its status, its words)."""
    if is_page(request.url.path):
        return error_page(request, e)
    return _error(e.status, e.type, e.message, e.headers)


@app.exception_handler(StarletteHTTPException)
async def _http_error(request: Request, e: StarletteHTTPException) -> JSONResponse:
    """Unknown paths (404), wrong methods (405) …: the same error shape as everything else."""
    kind = {404: "not_found", 405: "method_not_allowed"}.get(e.status_code, "http_error")
    message = e.detail if isinstance(e.detail, str) else "request failed"
    if e.status_code == 404 and message == "Not Found":
        message = f"no endpoint {request.url.path} (see /docs)"
    headers = getattr(e, "headers", None)
    if is_page(request.url.path):  # the web page answers with a page, in the same words
        return error_page(request, ApiError(e.status_code, kind, message))
    if e.status_code == 405:  # every method the path has (Starlette names only the first route's)
        headers = {**(headers or {}), "Allow": ", ".join(_allowed(request.url.path))}
    return _error(e.status_code, kind, message, headers)


def _allowed(path: str) -> list[str]:
    methods: set[str] = set()
    for route in app.routes:
        regex, route_methods = getattr(route, "path_regex", None), getattr(route, "methods", None)
        if regex is not None and route_methods and regex.match(path):
            methods |= set(route_methods)
    return sorted(methods)


@app.exception_handler(RequestValidationError)
async def _invalid(request: Request, e: RequestValidationError) -> JSONResponse:
    """422 naming the field and why; a malformed trace id in the path is a 400 of its own."""
    errors = e.errors()
    first = errors[0] if errors else {"loc": (), "msg": "invalid request"}
    if is_page(request.url.path):
        where = ".".join(str(x) for x in first.get("loc", ()) if x not in ("body", "path", "query")) or "request"
        return error_page(request, ApiError(404 if "path" in first.get("loc", ()) else 422, "invalid_request",
                                                f"{where}: {first['msg']}"))
    if tuple(first.get("loc", ()))[:2] == ("path", "trace_id"):
        return _error(400, "invalid_trace_id", "a trace id is 32 lowercase hex characters")
    if tuple(first.get("loc", ())) == ("body", "question") and first.get("type") == "string_too_long":
        return _error(422, "question_too_long", f"question: {first['msg']}")
    where = ".".join(str(x) for x in first.get("loc", ()) if x != "body") or "body"
    more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
    return _error(422, "invalid_request", f"{where}: {first['msg']}{more}")


# --- the ingress --------------------------------------------------------------------------------

Caller = Annotated[ApiKey, Depends(caller)]
CollectionName = Annotated[str, PathParam(pattern=COLLECTION_NAME, description="a collection's name")]
TraceId = Annotated[str, PathParam(pattern=TRACE_ID)]
DocId = Annotated[str, PathParam(min_length=1, max_length=200, pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]*$")]


@serve.deployment(name="Ingress")
@serve.ingress(app)
class Ingress:
    """Every route under /v1/collections/{name}/… has a twin without the prefix for the collection
    "default" (the routes from before collections). Each collection gets its own orchestrator:
    its handles ask the Retriever for that collection only, its traces go to its directory."""

    def __init__(self, profile: str, data_dir: str, runtime: RuntimeSettings, embedder: DeploymentHandle,
                 retriever: DeploymentHandle, reranker: DeploymentHandle | None, generator: DeploymentHandle | None,
                 judge: DeploymentHandle | None):
        """A model whose handle is None runs inside its caller (runtime.placement): it has no deployment."""
        self.profile = load_profile(profile)
        self.data_dir = DataDir(data_dir)
        self.runtime = runtime
        given = {"Embedder": embedder, "Retriever": retriever, "Reranker": reranker, "Generator": generator,
                 "Judge": judge}
        self.handles = {name: h for name, h in given.items() if h is not None}  # the deployments there are
        self.analyzer = query_analyzer(self.profile)
        # runtime.placement: the generator and the judge run here, beside the orchestrator (no hop), or
        # in their deployments
        place = runtime.placement
        self.judge_deadline_s = min(runtime.request_timeout_s, runtime.judge_timeout_s)  # wherever the judge runs
        self.local_generator = make_generator(self.profile, self.analyzer) if place.generator == "ingress" else None
        self.local_judge = (TimedJudge(make_judge(self.profile), self.judge_deadline_s)
                            if place.judge == "ingress" else None)
        self._orchestrators: dict[str, Orchestrator] = {}
        self._building = asyncio.Lock()
        self.in_flight = 0
        app.state.ingress = self  # the web page's routes (serve/web/) reach this replica through it
        app.state.guard = Guard(KeyStore(self.data_dir.root),
                                RateLimiter(runtime.rate_per_minute, runtime.rate_burst))
        app.state.body_limits = default_limits(runtime.max_upload_bytes)
        self.answer_budget = RateLimiter(runtime.answer_units_per_minute, runtime.answer_units_burst)
        try:
            no_keys = not app.state.guard.keys.any()
        except KeyManagementError as e:  # every request gets a typed 503 until it is repaired
            log.error("%s", e)
            no_keys = False
        if no_keys:
            log.warning("no API keys in %s: every request but /healthz gets 401 until an operator runs "
                        "`saksi keys create`", self.data_dir.root)

    # -- helpers -------------------------------------------------------------------------------

    def collections_for(self, key: ApiKey) -> list[str]:
        """The collections this key may use (the API's list, the page's selector)."""
        return [c for c in self.data_dir.collections() if key.may_use(c)]

    def _collection(self, key: ApiKey, name: str, role: str = "reader", create: bool = False) -> DataDir:
        """The collection's directory, once the key may use it with this role: 403 before 404, so a
        key learns nothing about collections it may not use."""
        require(key, role, name)
        try:
            return self.data_dir.collection(name) if create else self.data_dir.existing(name)
        except UnknownCollectionError:
            raise ApiError(404, "unknown_collection", f"no collection {name!r}") from None

    async def _get_orchestrator(self, collection: DataDir) -> Orchestrator:
        async with self._building:
            name = collection.name
            if name not in self._orchestrators:
                h, t = self.handles, self.runtime.request_timeout_s
                components = Components(
                    context=HandleContext(h["Retriever"], await h["Retriever"].model_names.remote(name), t, name),
                    generator=self.local_generator or await self._handle(HandleGenerator, "Generator", t),
                    judge=self.local_judge or await self._handle(HandleJudge, "Judge", self.judge_deadline_s))
                self._orchestrators[name] = Orchestrator(self.profile, components, self.analyzer, collection.traces,
                                                         audit=AuditLog(self.data_dir.root, collection=name))
            return self._orchestrators[name]

    async def _handle(self, kind, deployment: str, timeout: float):
        """A stage over its deployment's handle, named by the model the deployment runs."""
        info = await self.handles[deployment].info.remote()
        return kind(self.handles[deployment], info["name"], timeout)

    def _overloaded(self) -> ApiError:
        return ApiError(503, "overloaded", "too many questions in progress; retry shortly",
                        {"Retry-After": str(self.runtime.retry_after_s)})

    def _unavailable(self, what: str, e: BaseException) -> ApiError:
        log.warning("%s unavailable: %r", what, e)
        return ApiError(503, "unavailable", f"{what} is not available right now ({type(e).__name__}); retry shortly",
                        {"Retry-After": str(self.runtime.retry_after_s)})

    def _trace(self, collection: DataDir, trace_id: str) -> Trace:
        """The trace with this id: 404 when there is none, 422 when its file cannot be read as a trace."""
        path = collection.traces / f"{trace_id}.json"
        if not path.is_file():
            raise ApiError(404, "not_found", f"no trace {trace_id}")
        try:
            return load_trace(path)
        except TraceError as e:
            log.warning("trace %s unreadable: %s", trace_id, e)
            raise ApiError(422, "unreadable_trace", f"trace {trace_id} is damaged and cannot be read") from None

    # -- the service ---------------------------------------------------------------------------

    @app.get("/healthz", response_model=Health, summary="the ingress process is alive (no key needed)")
    async def healthz(self) -> Health:
        return Health(status="ok", version=__version__)

    @app.get("/readyz", response_model=Readiness, responses={**ERRORS, 503: {"model": Readiness}},
             summary="ready when every deployment answers and the indexes are loaded")
    async def readyz(self, key: Caller):
        async def probe(name: str, h: DeploymentHandle) -> tuple[str, DeploymentReadiness]:
            try:
                got = await asyncio.wait_for(h.ready.remote(), self.runtime.readiness_timeout_s)
            except Exception as e:
                return name, DeploymentReadiness(ready=False, problem=f"{type(e).__name__}: {e}"[:300])
            return name, DeploymentReadiness(**got) if isinstance(got, dict) else DeploymentReadiness(ready=bool(got))
        deployments = dict(await asyncio.gather(*(probe(n, h) for n, h in self.handles.items())))
        status = Readiness(ready=all(d.ready for d in deployments.values()), deployments=deployments)
        return JSONResponse(status.model_dump(mode="json"), status_code=200 if status.ready else 503)

    @app.get("/v1/collections", response_model=CollectionsResponse, responses=ERRORS,
             summary="the collections this key may use")
    async def collections(self, key: Caller) -> CollectionsResponse:
        return CollectionsResponse(collections=self.collections_for(key))

    # -- answers -------------------------------------------------------------------------------

    @app.post("/v1/answer", response_model=AnswerWithTrace, responses=ERRORS,
              summary="answer with receipts, or refuse saying what is missing (collection: the body's, or default)")
    async def answer(self, body: AnswerRequest, key: Caller) -> AnswerWithTrace:
        return await self._answer(self._collection(key, body.collection), body, key)

    @app.post("/v1/collections/{name}/answer", response_model=AnswerWithTrace, responses=ERRORS,
              summary="answer from this collection only")
    async def answer_in(self, name: CollectionName, body: CollectionAnswerRequest, key: Caller) -> AnswerWithTrace:
        return await self._answer(self._collection(key, name), body, key)

    async def _answer(self, collection: DataDir, body: CollectionAnswerRequest, key: ApiKey) -> AnswerWithTrace:
        if not body.question.strip():
            raise ApiError(422, "invalid_request", "question: the question is empty")
        try:  # the profile's cap, before taking a slot (the orchestrator enforces it too)
            check_question(body.question, self.profile.settings.limits)
        except QuestionRejected as e:
            raise ApiError(422, e.kind, f"question: {e.message}") from None
        wait = self.answer_budget.take(key.id, ANSWER_ADMISSION)
        if wait > 0:
            raise ApiError(429, "rate_limited", f"this key's questions have used their budget (answer_units_per_minute "
                                                f"{self.runtime.answer_units_per_minute:g}; an answer costs one unit per "
                                                f"second of its work); retry in {math.ceil(wait)} s",
                           {"Retry-After": str(max(1, math.ceil(wait)))})
        if self.in_flight >= self.runtime.max_in_flight:
            raise self._overloaded()
        self.in_flight += 1
        started = time.monotonic()
        try:
            orch = await self._get_orchestrator(collection)
            result, trace = await orch.run_within(body.question, body.lang, self.runtime.request_timeout_s,
                                                  actor=key.actor, as_of=body.as_of_date())
        except ApiError:
            raise
        except Exception as e:  # the retriever or the embedder is down: nothing can be verified
            raise self._unavailable("a pipeline component", e) from None
        finally:
            self.in_flight -= 1
            self.answer_budget.charge(key.id, answer_charge(time.monotonic() - started))  # what it cost, after
        out = answer_relative(AnswerWithTrace.of(result), collection.root)  # no server paths in a response
        return out.model_copy(update={"trace": trace if body.options.include_trace else None})

    # -- traces --------------------------------------------------------------------------------

    @app.get("/v1/traces/{trace_id}", response_model=Trace, responses=ERRORS,
             summary="a trace of the default collection, as written for the answer it explains")
    async def get_trace(self, trace_id: TraceId, key: Caller) -> Trace:
        return await self._read_trace(self._collection(key, DEFAULT_COLLECTION), trace_id)

    @app.get("/v1/collections/{name}/traces/{trace_id}", response_model=Trace, responses=ERRORS,
             summary="a trace of this collection")
    async def get_trace_in(self, name: CollectionName, trace_id: TraceId, key: Caller) -> Trace:
        return await self._read_trace(self._collection(key, name), trace_id)

    @app.post("/v1/replay", response_model=ReplayResponse, responses=ERRORS,
              summary="re-run the gates on a trace's recorded generator output; same decision?")
    async def replay(self, body: ReplayRequest, key: Caller) -> ReplayResponse:
        return await self._replay(self._collection(key, DEFAULT_COLLECTION), body)

    @app.post("/v1/collections/{name}/replay", response_model=ReplayResponse, responses=ERRORS,
              summary="replay a trace of this collection")
    async def replay_in(self, name: CollectionName, body: ReplayRequest, key: Caller) -> ReplayResponse:
        return await self._replay(self._collection(key, name), body)

    async def _read_trace(self, collection: DataDir, trace_id: str) -> Trace:
        return await within(self.runtime.page_timeout_s, "reading the trace", self._trace, collection, trace_id)

    async def _replay(self, collection: DataDir, body: ReplayRequest) -> ReplayResponse:
        from pipeline.replay import replay

        def run() -> ReplayResponse:  # the gates re-run on recorded verdicts: CPU work, in its own loop and thread
            return ReplayResponse.of(asyncio.run(replay(self._trace(collection, body.trace_id), self.analyzer)),
                                     body.trace_id)

        return await within(self.runtime.page_timeout_s, "replaying the trace", run)

    # -- the corpus ----------------------------------------------------------------------------

    @app.get("/v1/corpus", response_model=CorpusResponse, responses=ERRORS,
             summary="what the default collection holds: documents, chunks, readiness")
    async def corpus(self, key: Caller) -> CorpusResponse:
        return await self._coverage(self._collection(key, DEFAULT_COLLECTION))

    @app.get("/v1/collections/{name}/corpus", response_model=CorpusResponse, responses=ERRORS,
             summary="what this collection holds")
    async def corpus_in(self, name: CollectionName, key: Caller) -> CorpusResponse:
        return await self._coverage(self._collection(key, name))

    async def _coverage(self, collection: DataDir) -> CorpusResponse:
        try:
            return await asyncio.wait_for(self.handles["Retriever"].coverage.remote(collection.name),
                                          self.runtime.corpus_timeout_s)
        except Exception as e:
            raise self._unavailable("the retriever", e) from None

    @app.post("/v1/ingest", response_model=IngestResponse, responses=ERRORS,
              summary="ingest a few small files into the default collection (curator)")
    async def ingest(self, body: IngestRequest, key: Caller) -> IngestResponse:
        return await self._ingest(self._collection(key, DEFAULT_COLLECTION, "curator", create=True), body, key)

    @app.post("/v1/collections/{name}/ingest", response_model=IngestResponse, responses=ERRORS,
              summary="ingest a few small files into this collection, creating it (curator)")
    async def ingest_in(self, name: CollectionName, body: IngestRequest, key: Caller) -> IngestResponse:
        return await self._ingest(self._collection(key, name, "curator", create=True), body, key)

    async def _ingest(self, collection: DataDir, body: IngestRequest, key: ApiKey) -> IngestResponse:
        size = sum(len(f.data()) for f in body.files)
        limit = self.runtime.max_upload_bytes
        if size > limit:
            raise ApiError(413, "too_large", f"{size} bytes uploaded; the limit is {limit} (use `saksi ingest` for "
                                             "large corpora)")
        first: dict[str, bytes] = {}  # a name sent again in the same request: reported and skipped, like a bad file
        repeated = []
        for f in body.files:
            if f.name in first:
                repeated.append(IngestErrorOut(path=f.name, reason="a file of this name is earlier in this request; "
                                                                   "skipped"))
            else:
                first[f.name] = f.data()
        try:
            report = await self.handles["Retriever"].ingest.remote(
                list(first.items()), key.actor, key.authority, collection.name)
        except Exception as e:
            raise self._unavailable("the retriever", e) from None
        return report.model_copy(update={"files": report.files + len(repeated), "errors": [*report.errors, *repeated]})

    @app.delete("/v1/documents/{doc_id}", response_model=DeleteResponse, responses=ERRORS,
                summary="take a document out of the default collection (curator)")
    async def delete(self, doc_id: DocId, key: Caller) -> DeleteResponse:
        return await self._delete(self._collection(key, DEFAULT_COLLECTION, "curator"), doc_id, key)

    @app.delete("/v1/collections/{name}/documents/{doc_id}", response_model=DeleteResponse, responses=ERRORS,
                summary="take a document out of this collection (curator)")
    async def delete_in(self, name: CollectionName, doc_id: DocId, key: Caller) -> DeleteResponse:
        return await self._delete(self._collection(key, name, "curator"), doc_id, key)

    async def _delete(self, collection: DataDir, doc_id: str, key: ApiKey) -> DeleteResponse:
        """A curator removes only what its own key uploaded; the operator's ingest and other keys' uploads need an
        admin key (a curator that could delete and re-upload them could replace any record)."""
        if not key.has_role("admin"):
            try:
                documents = await self.handles["Retriever"].documents.remote(collection.name)
            except Exception as e:
                raise self._unavailable("the retriever", e) from None
            doc = next((d for d in documents if d.doc_id == doc_id), None)
            if doc is not None and doc.uploaded_by != key.actor:
                whose = "the operator's ingest" if not doc.uploaded_by or doc.uploaded_by == "local" else \
                    "another key's upload"
                raise ApiError(403, "forbidden", f"document {doc_id!r} is {whose}: a curator key removes only what it "
                                                 "uploaded; removing it needs an admin key")
        try:
            out = await self.handles["Retriever"].delete.remote(doc_id, key.actor, collection.name)
        except Exception as e:
            raise self._unavailable("the retriever", e) from None
        if out is None:
            raise ApiError(404, "not_found", f"no document {doc_id!r} in collection {collection.name!r}")
        return out

    # -- keys (admin) ----------------------------------------------------------------------------

    @app.get("/v1/keys", response_model=KeysResponse, responses=ERRORS, summary="every key, without secrets (admin)")
    async def keys(self, key: Caller) -> KeysResponse:
        require(key, "admin")
        return KeysResponse(keys=[KeyInfo(**k.public()) for k in app.state.guard.keys.keys()])

    @app.post("/v1/keys", response_model=KeyCreated, responses=ERRORS,
              summary="create a key; its token is in this response only (admin)")
    async def create_key(self, body: KeyRequest, key: Caller) -> KeyCreated:
        require(key, "admin")
        new, token = app.state.guard.keys.create(body.role, body.collections, body.authority, body.name,
                                                 actor=key.actor)
        return KeyCreated(**new.public(), token=token)

    @app.delete("/v1/keys/{key_id}", response_model=KeyInfo, responses=ERRORS, summary="revoke a key (admin)")
    async def revoke_key(self, key_id: Annotated[str, PathParam(pattern=r"^[0-9a-f]{12}$")], key: Caller) -> KeyInfo:
        require(key, "admin")
        try:
            gone = app.state.guard.keys.revoke(key_id, actor=key.actor)
        except KeyManagementError:
            raise ApiError(404, "not_found", f"no key {key_id}") from None
        return KeyInfo(**gone.public())
