"""What a request may do, in plain Python (no Ray, no FastAPI): ask, read a trace, replay it, list and
read the corpus, ingest, delete, manage keys, with the key's permissions and the collection resolved
once (`Service.where`).

The JSON API (serve/api.py) and the web page (serve/web/) call this and nothing else; each route is a
line or two over one method. Where the work runs is given, not known: `corpus` answers the corpus's
calls (the Retriever deployment's handle when served, a `pipeline.corpus.library.Library` in process) and
`stages` builds a collection's orchestrator components (over handles, or in process). So everything
here is tested without Ray (tests/serve/test_service.py).

Errors are `ApiError`s: a typed status, a type and a message, never a stack trace. A question that runs
past the deadline is a refusal (reason `timeout`), never an unverified answer.
"""
from __future__ import annotations

import asyncio
import json
import logging
import math
import re
import time
from dataclasses import dataclass
from pathlib import Path
from typing import AsyncIterator, Awaitable, Callable, Protocol

from pipeline.analysis import QueryAnalyzer, query_analyzer
from pipeline.audit import AuditLog, TraceCheck, check_trace
from pipeline.backends import make_generator, make_judge
from pipeline.config import Profile
from pipeline.corpus import DEFAULT_COLLECTION, DataDir
from pipeline.corpus.library import Library
from pipeline.errors import KeyManagementError, QuestionRejected, SaksiError, TraceError, UnknownCollectionError
from pipeline.keys import ApiKey, KeyStore
from pipeline.limits import check_question
from pipeline.orchestrator import Components, Orchestrator
from pipeline.replay import ReplayReport, recorded_result, replay
from pipeline.responses import (CorpusResponse, DeleteResponse, DeploymentReadiness, IngestErrorOut, IngestResponse,
                                KeyCreated, KeyInfo, KeysResponse, Readiness, ReplayResponse, answer_relative)
from pipeline.responses import Claim, claim_relative
from pipeline.reviews import ReviewStore
from pipeline.trace import Trace, load_trace
from pipeline.types import Document, Result

from .config import RuntimeSettings
from .errors import ApiError, within
from .rates import ANSWER_ADMISSION, RateLimiter, answer_charge
from .schemas import AnswerWithTrace, CollectionAnswerRequest, KeyRequest, UploadFile

log = logging.getLogger(__name__)


class CorpusCalls(Protocol):
    """The corpus's side of a request, by collection name: `pipeline.corpus.library.Library`'s methods, called
    in process or over the Retriever deployment's handle (`serve.handles.RemoteLibrary`)."""

    async def coverage(self, collection: str) -> CorpusResponse: ...
    async def documents(self, collection: str) -> list[Document]: ...
    async def document(self, doc: str, collection: str, refs_from: int = 0) -> dict | None: ...
    async def document_text(self, doc: str, collection: str, chunk: str | None = None,
                            at: int | None = None) -> dict | None: ...
    async def ingest(self, files: list[tuple[str, bytes]], actor: str, authority: str,
                     collection: str) -> IngestResponse: ...
    async def delete(self, doc_id: str, actor: str, collection: str) -> DeleteResponse | None: ...


Stages = Callable[[str], Awaitable[Components]]  # a collection's name -> what answers its questions
Probe = Callable[[], Awaitable[object]]  # a deployment's ready(): True, or a dict for DeploymentReadiness


@dataclass(frozen=True)
class Where:
    """A request's key and the collection it may use with the role it asked for, resolved once."""

    key: ApiKey
    collection: DataDir

    @property
    def name(self) -> str:
        return self.collection.name


class Service:
    def __init__(self, profile: Profile, data_dir: str | Path, runtime: RuntimeSettings, corpus: CorpusCalls,
                 stages: Stages, probes: dict[str, Probe] | None = None, analyzer: QueryAnalyzer | None = None):
        """`analyzer`: the profile's question analyser when the caller has built it already (the stages' models
        read questions with the same one)."""
        self.profile = profile
        self.data_dir = DataDir(data_dir)
        self.runtime = runtime
        self.analyzer = analyzer or query_analyzer(profile)
        self.keys = KeyStore(self.data_dir.root)
        self.corpus, self.stages, self.probes = corpus, stages, dict(probes or {})
        self.answer_budget = RateLimiter(runtime.answer_units_per_minute, runtime.answer_units_burst)
        self.in_flight = 0
        self._orchestrators: dict[str, Orchestrator] = {}
        self._building = asyncio.Lock()

    @classmethod
    def in_process(cls, profile: str, data_dir: str | Path, runtime: RuntimeSettings | None = None) -> "Service":
        """The service with everything in this process, no Ray: the corpus's calls go to a `Library`, the stages are
        the profile's own backends (the tests; anything that wants the API's rules without a cluster)."""
        library = Library.local(profile, data_dir)
        p = library.profile
        analyzer = query_analyzer(p)
        generator, judge = make_generator(p, analyzer), make_judge(p)

        async def stages(name: str) -> Components:
            return Components(await library.builder(name), generator, judge)

        return cls(p, data_dir, runtime or RuntimeSettings(), library, stages, probes={"Retriever": library.ready},
                   analyzer=analyzer)

    # -- who may do what, where ----------------------------------------------------------------

    def collections_for(self, key: ApiKey) -> list[str]:
        """The collections this key may use (the API's list, the page's selector)."""
        return [c for c in self.data_dir.collections() if key.may_use(c)]

    def where(self, key: ApiKey, name: str, role: str = "reader", create: bool = False) -> Where:
        """The collection `name`, once the key may use it with this role: 403 before 404, so a key learns
        nothing about collections it may not use. `create`: an upload makes the collection."""
        require(key, role, name)
        try:
            return Where(key, self.data_dir.collection(name) if create else self.data_dir.existing(name))
        except UnknownCollectionError:
            raise ApiError(404, "unknown_collection", f"no collection {name!r}") from None

    def about(self, name: str):
        """What a collection says of itself (its description, whether it is illustrative: `DataDir.about`)."""
        return self.data_dir.collection(name).about()

    async def readiness(self) -> Readiness:
        """Ready when every deployment answers its probe in time (and the indexes are loaded)."""
        async def probe(name: str, ready: Probe) -> tuple[str, DeploymentReadiness]:
            try:
                got = await asyncio.wait_for(ready(), self.runtime.readiness_timeout_s)
            except Exception as e:
                return name, DeploymentReadiness(ready=False, problem=f"{type(e).__name__}: {e}"[:300])
            return name, DeploymentReadiness(**got) if isinstance(got, dict) else DeploymentReadiness(ready=bool(got))
        deployments = dict(await asyncio.gather(*(probe(n, p) for n, p in self.probes.items())))
        return Readiness(ready=all(d.ready for d in deployments.values()), deployments=deployments)

    # -- answers ---------------------------------------------------------------------------------

    async def answer(self, where: Where, body: CollectionAnswerRequest) -> AnswerWithTrace:
        """The answer with receipts or the refusal, charged to the key's answer budget by its work."""
        started = self._admit(where, body)
        try:
            orch = await self.orchestrator(where.collection)
            result, trace = await orch.run_within(body.question, body.lang, self.runtime.request_timeout_s,
                                                  actor=where.key.actor, as_of=body.as_of_date())
        except ApiError:
            raise
        except Exception as e:  # the retriever or the embedder is down: nothing can be verified
            raise self.unavailable("a pipeline component", e) from None
        finally:
            self._release(where, started)
        return self._answer_out(where, result, trace, body.options.include_trace)

    def answer_stream(self, where: Where, body: CollectionAnswerRequest) -> AsyncIterator[tuple[str, dict]]:
        """The answer told as it is decided (`pipeline/release.py`): ("analysis" | "retrieval" | "retry" | "claim" |
        "demoted", data) as they happen, each claim only once nothing can withhold it; ("refusal", its reasons and
        nearest records) when it refuses; then ("done", {"trace_id", "answer", "withdrawn"}), the whole answer. Admission (budget, in-flight cap) is decided here, before
        the first event, so a refused request is a typed error, not a stream. A client that goes away does not stop
        the question: its trace and audit entry are still written (claims may have been shown)."""
        started = self._admit(where, body)
        queue: asyncio.Queue = asyncio.Queue()

        async def run():
            try:
                orch = await self.orchestrator(where.collection)
                return await orch.run_within(body.question, body.lang, self.runtime.request_timeout_s,
                                             actor=where.key.actor, as_of=body.as_of_date(),
                                             emit=lambda kind, data: queue.put_nowait((kind, data)))
            finally:
                self._release(where, started)

        return self._told(where, body, asyncio.create_task(run()), queue)

    async def _told(self, where: Where, body: CollectionAnswerRequest, task: asyncio.Task,
                    queue: asyncio.Queue) -> AsyncIterator[tuple[str, dict]]:
        withdrawn: list[int] = []
        task.add_done_callback(lambda _: queue.put_nowait(None))  # after every event the question emitted
        while (event := await queue.get()) is not None:
            kind, data = event
            if kind == "decided":
                withdrawn = data["withdrawn"]
                continue
            yield kind, self._event_json(where, kind, data)
        try:
            result, trace = task.result()
        except ApiError as e:
            yield "error", {"error": {"type": e.type, "message": e.message}}
            return
        except Exception as e:
            err = self.unavailable("a pipeline component", e)
            yield "error", {"error": {"type": err.type, "message": err.message}}
            return
        out = self._answer_out(where, result, trace, body.options.include_trace).model_dump(mode="json")
        if out["outcome"] == "refusal":
            yield "refusal", {k: out[k] for k in ("reason_code", "reason", "missing_categories", "nearest",
                                                  "not_in_corpus", "unmentioned")}
        yield "done", {"trace_id": out["trace_id"], "answer": out, "withdrawn": withdrawn}

    def _event_json(self, where: Where, kind: str, data: dict) -> dict:
        """An event as JSON: a claim as the answer shows it (files relative to the data directory)."""
        if "claim" in data:
            data = {**data, "claim": claim_relative(Claim.of(data["claim"]), where.collection.root).model_dump(
                mode="json")}
        return data

    def _answer_out(self, where: Where, result: Result, trace: Trace, include_trace: bool) -> AnswerWithTrace:
        out = answer_relative(AnswerWithTrace.of(result), where.collection.root)  # no server paths in a response
        return out.model_copy(update={"trace": trace if include_trace else None})

    def _admit(self, where: Where, body: CollectionAnswerRequest) -> float:
        """A question admitted: not empty, within the profile's cap, within the key's budget, a slot free. Returns
        when it started (`_release` charges its work then)."""
        if not body.question.strip():
            raise ApiError(422, "invalid_request", "question: the question is empty")
        try:  # the profile's cap, before taking a slot (the orchestrator enforces it too)
            check_question(body.question, self.profile.settings.limits)
        except QuestionRejected as e:
            raise ApiError(422, e.kind, f"question: {e.message}") from None
        key = where.key
        wait = self.answer_budget.take(key.id, ANSWER_ADMISSION)
        if wait > 0:
            raise ApiError(429, "rate_limited", f"this key's questions have used their budget (answer_units_per_minute "
                                                f"{self.runtime.answer_units_per_minute:g}; an answer costs one unit per "
                                                f"second of its work); retry in {math.ceil(wait)} s",
                           {"Retry-After": str(max(1, math.ceil(wait)))})
        if self.in_flight >= self.runtime.max_in_flight:
            raise ApiError(503, "overloaded", "too many questions in progress; retry shortly",
                           {"Retry-After": str(self.runtime.retry_after_s)})
        self.in_flight += 1
        return time.monotonic()

    def _release(self, where: Where, started: float) -> None:
        self.in_flight -= 1
        self.answer_budget.charge(where.key.id, answer_charge(time.monotonic() - started))  # what it cost, after

    async def orchestrator(self, collection: DataDir) -> Orchestrator:
        """The collection's orchestrator: its components ask for that collection only, its traces and audit
        entries go to its directory."""
        async with self._building:
            name = collection.name
            if name not in self._orchestrators:
                self._orchestrators[name] = Orchestrator(self.profile, await self.stages(name), self.analyzer,
                                                         collection.traces,
                                                         audit=AuditLog(self.data_dir.root, collection=name))
            return self._orchestrators[name]

    # -- traces ----------------------------------------------------------------------------------

    def trace(self, where: Where, trace_id: str) -> Trace:
        """The trace with this id (file work: call it in a thread): 404 when there is none, 422 when its file cannot
        be read as a trace."""
        path = where.collection.traces / f"{trace_id}.json"
        if not path.is_file():
            raise ApiError(404, "not_found", f"no trace {trace_id}")
        try:
            return load_trace(path)
        except TraceError as e:
            log.warning("trace %s unreadable: %s", trace_id, e)
            raise ApiError(422, "unreadable_trace", f"trace {trace_id} is damaged and cannot be read") from None

    async def read_trace(self, where: Where, trace_id: str) -> Trace:
        return await within(self.runtime.page_timeout_s, "reading the trace", self.trace, where, trace_id)

    def checked_trace(self, where: Where, trace_id: str) -> TraceCheck:
        """The trace file of an answer against the audit log's record of it (`pipeline.audit.check_trace`): a trace
        changed since its answer was given is never shown as recorded (409 trace_altered); one the log does not name
        is shown marked as unverifiable."""
        check = check_trace(self.data_dir.root, where.collection.traces / f"{trace_id}.json", trace_id)
        if check.state == "altered":
            raise ApiError(409, "trace_altered", f"trace {trace_id} changed after its answer was given: its SHA-256 is "
                                                 f"not the one audit entry {check.seq} recorded; it is not shown")
        return check

    def recorded(self, trace: Trace, lang: str | None = None) -> Result:
        """The answer as it was shown, rebuilt from its trace (`pipeline.replay.recorded_result`)."""
        return recorded_result(trace, self.analyzer, lang)

    def replay_report(self, trace: Trace) -> ReplayReport:
        """The gates re-run on the trace's recorded generator output (CPU work: call it in a thread)."""
        return asyncio.run(replay(trace, self.analyzer))

    async def replay(self, where: Where, trace_id: str) -> ReplayResponse:
        def run() -> ReplayResponse:
            return ReplayResponse.of(self.replay_report(self.trace(where, trace_id)), trace_id)

        return await within(self.runtime.page_timeout_s, "replaying the trace", run)

    def recent_answers(self, key: ApiKey, names: list[str], limit: int = 8) -> list[dict]:
        """The key's own latest questions in these collections (from the audit log's answer entries, newest first),
        each with its answer's collection and trace id; a question whose trace is gone (pruned) is left out."""
        out = []
        for entry in AuditLog(self.data_dir.root).recent("answer", key.actor, limit=limit * 2):
            data = entry.get("data") or {}
            name, trace_id = data.get("collection") or DEFAULT_COLLECTION, str(data.get("trace_id", ""))
            if name not in names or not re.fullmatch(r"[0-9a-f]{32}", trace_id):
                continue
            path = self.data_dir.collection(name).traces / f"{trace_id}.json"
            if not path.is_file():
                continue  # pruned: its answer can no longer be shown
            question = data.get("question")  # in the entry since it records the question; earlier ones: the trace's
            if not isinstance(question, str):
                question = _question_of(path)
            if question is not None:
                out.append({"collection": name, "trace_id": trace_id, "question": question,
                            "at": entry.get("at", ""), "outcome": data.get("outcome")})
            if len(out) == limit:
                break
        return out

    # -- reviews ---------------------------------------------------------------------------------

    def reviews(self, where: Where, trace_id: str) -> dict:
        """The reviewers' decisions on an answer's claims (none when the reviews file cannot be read)."""
        try:
            return ReviewStore(self.data_dir.root).for_trace(where.name, trace_id)
        except (OSError, SaksiError):
            return {}

    def review(self, where: Where, trace_id: str, result: Result, claim: int, decision: str, reason: str | None,
               note: str) -> None:
        """A reviewer's decision on one claim of the answer `result` (rebuilt from its trace). ReviewError when the
        decision is incomplete (a rejection without its reason); 503 when the reviews file cannot be written."""
        if not 0 <= claim < len(result.claims):
            raise ApiError(422, "invalid_request", f"claim: this answer has {len(result.claims)} claims")
        c = result.claims[claim]
        try:
            ReviewStore(self.data_dir.root).record(
                collection=where.name, trace_id=trace_id, claim=claim, decision=decision, by=where.key.actor,
                question=result.question, claim_text=c.text, chunk_ids=[x.chunk_id for x in c.citations],
                reason=reason, note=note)
        except OSError as e:  # the reviews file cannot be written (a directory in its place, a full disk): say so
            raise ApiError(503, "unavailable", f"the review cannot be saved: the server's reviews file cannot be "
                                               f"written ({e.strerror or type(e).__name__}); an operator must repair "
                                               "it") from None

    # -- the corpus ------------------------------------------------------------------------------

    async def coverage(self, where: Where) -> CorpusResponse:
        """What the collection holds: documents, chunks, readiness."""
        return await self._corpus("coverage", where.name, timeout=self.runtime.corpus_timeout_s)

    async def documents(self, where: Where) -> list[Document]:
        return await self._corpus("documents", where.name, timeout=self.runtime.corpus_timeout_s)

    async def document(self, where: Where, doc: str, refs_from: int = 0) -> dict | None:
        """One document for its page (metadata, outline, a page of references); None: no such document."""
        return await self._corpus("document", doc, where.name, refs_from=refs_from,
                                  timeout=self.runtime.corpus_timeout_s)

    async def document_text(self, where: Where, doc: str, chunk: str | None = None, at: int | None = None
                            ) -> dict | None:
        """One window of a document's text (around `chunk`, or from offset `at`); None: no such document."""
        return await self._corpus("document_text", doc, where.name, chunk=chunk, at=at,
                                  timeout=self.runtime.corpus_timeout_s)

    async def original(self, where: Where, doc_id: str) -> Path:
        """The file a document was ingested from, as the server holds it (404 when the document or its file is
        gone). Only the documents' records are read, not their chunks or text."""
        doc = next((d for d in await self.documents(where) if d.doc_id == doc_id), None)
        if doc is None:
            raise ApiError(404, "not_found", f"no document {doc_id!r} in collection {where.name!r}")
        path = Path(doc.original)
        if not path.is_file():
            raise ApiError(404, "not_found", f"the original file of {doc_id} is no longer on the server")
        return path

    async def ingest(self, where: Where, files: list[UploadFile]) -> IngestResponse:
        """A few small files into the collection, with the key's authority as the ceiling. A name sent twice in one
        request is reported and skipped, like a bad file."""
        sent = [(f.name, f.data()) for f in files]  # base64 decoded once
        size = sum(len(data) for _, data in sent)
        limit = self.runtime.max_upload_bytes
        if size > limit:
            raise ApiError(413, "too_large", f"{size} bytes uploaded; the limit is {limit} (use `saksi ingest` for "
                                             "large corpora)")
        first: dict[str, bytes] = {}
        repeated = []
        for name, data in sent:
            if name in first:
                repeated.append(IngestErrorOut(path=name, reason="a file of this name is earlier in this request; "
                                                                 "skipped"))
            else:
                first[name] = data
        report = await self._corpus("ingest", list(first.items()), where.key.actor, where.key.authority, where.name)
        return report.model_copy(update={"files": report.files + len(repeated), "errors": [*report.errors, *repeated]})

    async def delete(self, where: Where, doc_id: str) -> DeleteResponse:
        """A curator removes only what its own key uploaded; the operator's ingest and other keys' uploads need an
        admin key (a curator that could delete and re-upload them could replace any record)."""
        key = where.key
        if not key.has_role("admin"):
            documents = await self._corpus("documents", where.name)
            doc = next((d for d in documents if d.doc_id == doc_id), None)
            if doc is not None and doc.uploaded_by != key.actor:
                whose = "the operator's ingest" if not doc.uploaded_by or doc.uploaded_by == "local" else \
                    "another key's upload"
                raise ApiError(403, "forbidden", f"document {doc_id!r} is {whose}: a curator key removes only what it "
                                                 "uploaded; removing it needs an admin key")
        out = await self._corpus("delete", doc_id, key.actor, where.name)
        if out is None:
            raise ApiError(404, "not_found", f"no document {doc_id!r} in collection {where.name!r}")
        return out

    async def _corpus(self, method: str, *args, timeout: float | None = None, **kwargs):
        """One call to the corpus; when it fails or runs past `timeout`, a typed 503 saying the retriever is not
        available (never a 500)."""
        try:
            return await asyncio.wait_for(getattr(self.corpus, method)(*args, **kwargs), timeout)
        except Exception as e:
            raise self.unavailable("the retriever", e) from None

    def unavailable(self, what: str, e: BaseException) -> ApiError:
        log.warning("%s unavailable: %r", what, e)
        return ApiError(503, "unavailable", f"{what} is not available right now ({type(e).__name__}); retry shortly",
                        {"Retry-After": str(self.runtime.retry_after_s)})

    # -- keys (admin) ----------------------------------------------------------------------------

    def list_keys(self, key: ApiKey) -> KeysResponse:
        require(key, "admin")
        return KeysResponse(keys=[KeyInfo(**k.public()) for k in self.keys.keys()])

    def create_key(self, key: ApiKey, body: KeyRequest) -> KeyCreated:
        require(key, "admin")
        new, token = self.keys.create(body.role, body.collections, body.authority, body.name, actor=key.actor)
        return KeyCreated(**new.public(), token=token)

    def revoke_key(self, key: ApiKey, key_id: str) -> KeyInfo:
        require(key, "admin")
        try:
            gone = self.keys.revoke(key_id, actor=key.actor)
        except KeyManagementError:
            raise ApiError(404, "not_found", f"no key {key_id}") from None
        return KeyInfo(**gone.public())

    def no_keys(self) -> bool:
        """True when the data directory has no key yet (every request but /healthz is then a 401)."""
        try:
            return not self.keys.any()
        except KeyManagementError as e:  # every request gets a typed 503 until it is repaired
            log.error("%s", e)
            return False


def _question_of(path: Path) -> str | None:
    try:
        return str(json.loads(path.read_text(encoding="utf-8"))["question"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def require(key: ApiKey, role: str, collection: str | None = None) -> None:
    """403 unless the key has this role (or a higher one) and, when given, may use the collection."""
    if not key.has_role(role):
        raise ApiError(403, "forbidden", f"key {key.id} is a {key.role}; this needs a {role} key")
    if collection is not None and not key.may_use(collection):
        raise ApiError(403, "forbidden", f"key {key.id} may not use collection {collection!r}")
