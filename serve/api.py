"""The HTTP API (FastAPI, versioned under /v1) and the Ingress deployment that hosts it.

Schemas first, then the ingress. The ingress builds the pipeline's Components over
deployment handles (serve/handles.py) and runs the one orchestrator from `pipeline/`.

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
import logging
import re
from pathlib import Path
from typing import Any, Literal

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException
from pydantic import BaseModel, ConfigDict, Field, model_validator
from ray import serve
from ray.serve.handle import DeploymentHandle

from pipeline import __version__
from pipeline.config import load_profile
from pipeline.orchestrator import Components, Orchestrator
from pipeline.render import result_json
from pipeline.trace import dump_trace, load_trace

from .deployments import _analyzer
from .handles import (HandleChunkSource, HandleDenseIndex, HandleGenerator, HandleJudge, HandleLexicalIndex,
                      HandleReranker, HandleSparseIndex, handle_embedder)

log = logging.getLogger(__name__)

# --- schemas ----------------------------------------------------------------------------------


class _In(BaseModel):
    model_config = ConfigDict(extra="forbid")


class AnswerOptions(_In):
    include_trace: bool = Field(False, description="embed the full trace in the response")


class AnswerRequest(_In):
    question: str = Field(..., min_length=1, max_length=2000, description="the question, Indonesian or English")
    lang: Literal["id", "en"] | None = Field(None, description="labels of the answer (default: the question's)")
    collection: str = Field("default", description="the corpus to ask; this deployment serves one, 'default'")
    options: AnswerOptions = AnswerOptions()


class Citation(BaseModel):
    chunk_id: str
    document: str | None
    doc_id: str | None
    location: str | None
    quote: str
    verified: bool
    is_example: bool
    source: str | None
    source_span: list[int] | None
    path: str | None = None
    pages: list[int] | None = None
    original: str | None = None


class Claim(BaseModel):
    text: str
    status: Literal["supported", "unsupported"]
    confidence: float | None
    band: str | None
    is_example: bool
    part: int
    reasons: list[str]
    verdict: dict[str, Any] | None
    confidence_breakdown: dict[str, Any] | None
    citations: list[Citation]


class AnswerResponse(BaseModel):
    """The same JSON as `saksi ask --json` (README, "ask --json")."""

    outcome: Literal["answer", "refusal"]
    question: str
    lang: str
    claims: list[Claim]
    conflicts: list[dict[str, Any]]
    parts: list[dict[str, Any]]
    retried: bool
    reason_code: str | None
    reason: str | None
    missing_categories: list[str]
    nearest: list[dict[str, Any]]
    trace_id: str
    trace_path: str | None
    not_in_corpus: list[str] = []
    trace: dict[str, Any] | None = None


class ReplayRequest(_In):
    trace_id: str = Field(..., pattern=r"^[0-9a-f]{32}$")


class ReplayResponse(BaseModel):
    trace_id: str
    same: bool
    recorded: str
    replayed: str
    differences: list[str]
    result: AnswerResponse


class UploadFile(_In):
    name: str = Field(..., pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]{0,120}\.(md|markdown|txt|pdf|html|htm|docx)$",
                      description="file name; .md, .markdown, .txt, .pdf, .html, .htm or .docx")
    content: str | None = Field(None, description="UTF-8 text (Markdown, text, HTML), optionally with YAML "
                                                  "front matter")
    content_base64: str | None = Field(None, description="the file's bytes, base64 (PDF, DOCX, or any format)")

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


class IngestResponse(BaseModel):
    files: int
    ingested: list[str]
    unchanged: list[str]
    errors: list[dict[str, str]]
    chunks_written: int
    embedded: int
    removed_from_dense: int
    total_documents: int
    total_chunks: int
    needs_ocr: dict[str, list[int]] = {}


class CorpusResponse(BaseModel):
    data_dir: str
    fingerprint: str | None
    ready: bool
    problem: str | None
    documents: int
    chunks: int
    items: list[dict[str, Any]]


class Health(BaseModel):
    status: str
    version: str


class Readiness(BaseModel):
    ready: bool
    deployments: dict[str, Any]


class ErrorBody(BaseModel):
    type: str
    message: str


class ErrorResponse(BaseModel):
    error: ErrorBody


class ApiError(Exception):
    def __init__(self, status: int, type_: str, message: str, headers: dict[str, str] | None = None):
        super().__init__(message)
        self.status, self.type, self.message, self.headers = status, type_, message, headers or {}


ERRORS = {400: {"model": ErrorResponse}, 404: {"model": ErrorResponse}, 413: {"model": ErrorResponse},
          422: {"model": ErrorResponse}, 503: {"model": ErrorResponse}}

app = FastAPI(title="saksi", version=__version__,
              description="Answers with exact quotes from the ingested records, or refuses and says what is missing.")


@app.exception_handler(ApiError)
async def _api_error(request: Request, e: ApiError) -> JSONResponse:
    return JSONResponse({"error": {"type": e.type, "message": e.message}}, status_code=e.status, headers=e.headers)


@app.exception_handler(StarletteHTTPException)
async def _http_error(request: Request, e: StarletteHTTPException) -> JSONResponse:
    """Unknown paths (404), wrong methods (405) …: the same error shape as everything else."""
    kind = {404: "not_found", 405: "method_not_allowed"}.get(e.status_code, "http_error")
    message = e.detail if isinstance(e.detail, str) else "request failed"
    if e.status_code == 404 and message == "Not Found":
        message = f"no endpoint {request.url.path} (see /docs)"
    return JSONResponse({"error": {"type": kind, "message": message}}, status_code=e.status_code,
                        headers=getattr(e, "headers", None))


@app.exception_handler(RequestValidationError)
async def _invalid(request: Request, e: RequestValidationError) -> JSONResponse:
    first = e.errors()[0] if e.errors() else {"loc": (), "msg": "invalid request"}
    where = ".".join(str(x) for x in first.get("loc", ()) if x != "body") or "body"
    n = len(e.errors())
    more = f" (and {n - 1} more)" if n > 1 else ""
    return JSONResponse({"error": {"type": "invalid_request", "message": f"{where}: {first['msg']}{more}"}},
                        status_code=422)


# --- the ingress --------------------------------------------------------------------------------

_TRACE_ID = re.compile(r"^[0-9a-f]{32}$")


@serve.deployment(name="Ingress")
@serve.ingress(app)
class Ingress:
    def __init__(self, profile: str, data_dir: str, settings: dict, embedder: DeploymentHandle,
                 retriever: DeploymentHandle, reranker: DeploymentHandle, generator: DeploymentHandle,
                 judge: DeploymentHandle):
        self.profile = load_profile(profile)
        self.data_dir = Path(data_dir)
        self.trace_dir = self.data_dir / "traces"
        self.settings = settings
        self.handles = {"Embedder": embedder, "Retriever": retriever, "Reranker": reranker,
                        "Generator": generator, "Judge": judge}
        self.analyzer = _analyzer(self.profile)
        self._orchestrator: Orchestrator | None = None
        self._building = asyncio.Lock()
        self.in_flight = 0

    async def _get_orchestrator(self) -> Orchestrator:
        async with self._building:
            if self._orchestrator is None:
                h, t = self.handles, float(self.settings["request_timeout_s"])
                emb, rr, gen, jd = await asyncio.gather(*(h[n].info.remote() for n in
                                                          ("Embedder", "Reranker", "Generator", "Judge")))
                sparse = self.profile.settings.embedder.sparse
                components = Components(
                    embedder=handle_embedder(h["Embedder"], emb, t, sparse),
                    sparse=HandleSparseIndex(h["Retriever"], t) if sparse else None,
                    dense=HandleDenseIndex(h["Retriever"], t), lexical=HandleLexicalIndex(h["Retriever"], t),
                    chunks=HandleChunkSource(h["Retriever"], t),
                    reranker=HandleReranker(h["Reranker"], rr["name"], t),
                    generator=HandleGenerator(h["Generator"], gen["name"], t),
                    judge=HandleJudge(h["Judge"], jd["name"], min(t, 10.0)))
                self._orchestrator = Orchestrator(self.profile, components, self.analyzer, self.trace_dir)
            return self._orchestrator

    def _overloaded(self) -> ApiError:
        return ApiError(503, "overloaded", "too many questions in progress; retry shortly",
                        {"Retry-After": str(self.settings["retry_after_s"])})

    def _unavailable(self, what: str, e: BaseException) -> ApiError:
        log.warning("%s unavailable: %r", what, e)
        return ApiError(503, "unavailable", f"{what} is not available right now ({type(e).__name__}); retry shortly",
                        {"Retry-After": str(self.settings["retry_after_s"])})

    @app.get("/healthz", response_model=Health, summary="the ingress process is alive")
    async def healthz(self) -> dict:
        return {"status": "ok", "version": __version__}

    @app.get("/readyz", response_model=Readiness, responses={503: {"model": Readiness}},
             summary="ready when every deployment answers and the indexes are loaded")
    async def readyz(self):
        async def probe(name: str, h: DeploymentHandle):
            try:
                return name, await asyncio.wait_for(h.ready.remote(), 5)
            except Exception as e:
                return name, {"ready": False, "problem": f"{type(e).__name__}: {e}"[:300]}
        got = dict(await asyncio.gather(*(probe(n, h) for n, h in self.handles.items())))
        status = {n: (v if isinstance(v, dict) else {"ready": bool(v)}) for n, v in got.items()}
        ready = all(v.get("ready") for v in status.values())
        return JSONResponse({"ready": ready, "deployments": status}, status_code=200 if ready else 503)

    @app.post("/v1/answer", response_model=AnswerResponse, responses=ERRORS,
              summary="answer with receipts, or refuse saying what is missing")
    async def answer(self, body: AnswerRequest) -> dict:
        if body.collection != "default":
            raise ApiError(404, "unknown_collection", f"no collection {body.collection!r}; this deployment serves "
                                                      "'default'")
        if not body.question.strip():
            raise ApiError(422, "invalid_request", "question: the question is empty")
        if self.in_flight >= int(self.settings["max_in_flight"]):
            raise self._overloaded()
        self.in_flight += 1
        try:
            orch = await self._get_orchestrator()
            result, trace = await orch.run_within(body.question, body.lang, float(self.settings["request_timeout_s"]))
        except ApiError:
            raise
        except Exception as e:  # the retriever or the embedder is down: nothing can be verified
            raise self._unavailable("a pipeline component", e) from None
        finally:
            self.in_flight -= 1
        out = result_json(result)
        if body.options.include_trace:
            out["trace"] = dump_trace(trace)
        return out

    @app.get("/v1/traces/{trace_id}", responses=ERRORS, summary="a trace, as written for the answer it explains")
    async def get_trace(self, trace_id: str) -> dict:
        if not _TRACE_ID.match(trace_id):
            raise ApiError(400, "invalid_trace_id", "a trace id is 32 lowercase hex characters")
        path = self.trace_dir / f"{trace_id}.json"
        if not path.is_file():
            raise ApiError(404, "not_found", f"no trace {trace_id}")
        return dump_trace(load_trace(path))

    @app.post("/v1/replay", response_model=ReplayResponse, responses=ERRORS,
              summary="re-run the gates on a trace's recorded generator output; same decision?")
    async def replay(self, body: ReplayRequest) -> dict:
        from pipeline.replay import replay

        path = self.trace_dir / f"{body.trace_id}.json"
        if not path.is_file():
            raise ApiError(404, "not_found", f"no trace {body.trace_id}")
        report = await replay(load_trace(path), self.analyzer)
        return {"trace_id": body.trace_id, "same": report.same, "recorded": report.recorded.outcome,
                "replayed": report.replayed.outcome, "differences": report.differences(),
                "result": result_json(report.result)}

    @app.get("/v1/corpus", response_model=CorpusResponse, responses=ERRORS,
             summary="what is ingested: documents, chunks, readiness")
    async def corpus(self) -> dict:
        try:
            return await asyncio.wait_for(self.handles["Retriever"].coverage.remote(), 10)
        except Exception as e:
            raise self._unavailable("the retriever", e) from None

    @app.post("/v1/ingest", response_model=IngestResponse, responses=ERRORS,
              summary="ingest a few small files (large corpora: `saksi ingest` or a Ray job)")
    async def ingest(self, body: IngestRequest) -> dict:
        size = sum(len(f.data()) for f in body.files)
        limit = int(self.settings["max_upload_bytes"])
        if size > limit:
            raise ApiError(413, "too_large", f"{size} bytes uploaded; the limit is {limit} (use `saksi ingest` for "
                                             "large corpora)")
        names = [f.name for f in body.files]
        if len(set(names)) != len(names):
            raise ApiError(422, "invalid_request", "files: two files have the same name")
        try:
            return await self.handles["Retriever"].ingest.remote([(f.name, f.data()) for f in body.files])
        except Exception as e:
            raise self._unavailable("the retriever", e) from None
