"""Sign-in, the ask form, the answer with its receipts, and the reviewer's decisions.

An answer has its own address, `/ui/answers/{collection}/{trace_id}`: the ask form runs the
question and redirects there, and the page rebuilds the answer from its trace exactly as it was
shown (`pipeline.replay.recorded_result`), so a claim's index is stable for reviews, and the
page can be reloaded, bookmarked or sent to a colleague with the same key's rights.
"""
from __future__ import annotations

import json
import re
from typing import Annotated

from fastapi import APIRouter, Path, Request
from fastapi.responses import StreamingResponse
from pydantic import ValidationError

from pipeline import status
from pipeline.decision import unmentioned_text
from pipeline.config import MAX_QUESTION_CHARS_CEILING
from pipeline.corpus import DEFAULT_COLLECTION
from pipeline.keys import COLLECTION_NAME
from pipeline.responses import AnswerResponse, StandingOut

from ..auth import SESSION_COOKIE
from ..errors import ApiError
from ..schemas import CollectionAnswerRequest
from .common import LANG_COOKIE, back_to, env, key_of, lang_of, page_work, render, see_other, service
from .labels import LANGS, labels, reason_words

router = APIRouter()

CollectionName = Annotated[str, Path(pattern=COLLECTION_NAME)]
TraceId = Annotated[str, Path(pattern=r"^[0-9a-f]{32}$")]


# --- signing in ---------------------------------------------------------------------------------


@router.get("/ui/signin")
async def signin_form(request: Request, next: str = "/"):
    return render(request, "signin.html", next=back_to(next), problem=None, message=None)


@router.post("/ui/signin")
async def signin(request: Request):
    form = await request.form()
    token, target = str(form.get("key", "")).strip(), back_to(str(form.get("next", "/")))
    try:
        request.app.state.guard.check(token)
    except ApiError as e:
        status = 401 if e.status == 401 else e.status
        problem = None if e.status != 401 else "signin_bad"
        return render(request, "signin.html", status=status, next=target, problem=problem,
                      message=None if problem else e.message)
    out = see_other(target)
    out.set_cookie(SESSION_COOKIE, token, httponly=True, samesite="strict", path="/",
                   secure=request.url.scheme == "https")
    return out


@router.post("/ui/signout")
async def signout(request: Request):
    out = see_other("/ui/signin")
    out.delete_cookie(SESSION_COOKIE, path="/")
    return out


@router.get("/ui/lang/{to}")
async def switch_language(request: Request, to: str, next: str = "/"):
    out = see_other(back_to(next))
    if to in LANGS:
        out.set_cookie(LANG_COOKIE, to, samesite="lax", path="/", max_age=365 * 24 * 3600)
    return out


# --- asking -------------------------------------------------------------------------------------


def _collections(request: Request) -> list[str]:
    key = key_of(request)
    names = service(request).collections_for(key)
    return names or ([DEFAULT_COLLECTION] if key.may_use(DEFAULT_COLLECTION) else [])


def _ask_page(request: Request, status: int = 200, question: str = "", collection: str | None = None,
              message: str | None = None, error_type: str = "invalid_request"):
    svc = service(request)
    names = _collections(request)
    about = {name: svc.about(name) for name in names}
    if collection is None:  # the first collection of real documents, when there is one
        collection = next((n for n in names if not about[n].illustrative), names[0] if names else DEFAULT_COLLECTION)
    return render(request, "ask.html", status=status, collections=names, about=about, question=question,
                  chosen=collection, message=message, error_type=error_type,
                  max_chars=svc.profile.settings.limits.max_question_chars,
                  recent=svc.recent_answers(key_of(request), names, RECENT))


RECENT = 8


@router.get("/")
async def ask_form(request: Request, collection: str | None = None, question: str = ""):
    # the page reads the collections' descriptions, the audit log's end and a few traces
    return await page_work(request, "the ask page", _ask_page, request, collection=collection,
                           question=question[:MAX_QUESTION_CHARS_CEILING])


@router.post("/ui/ask")
async def ask(request: Request):
    form = await request.form()
    question, name = str(form.get("question", "")), str(form.get("collection") or DEFAULT_COLLECTION)
    svc = service(request)
    try:
        body = CollectionAnswerRequest(question=question)
    except ValidationError as e:
        first = e.errors()[0]
        return await page_work(request, "the ask page", _ask_page, request, 422,
                               question[:MAX_QUESTION_CHARS_CEILING], name, f"{first['msg']}")
    try:
        where = svc.where(key_of(request), name)
        answer = await svc.answer(where, body)
    except ApiError as e:
        return await page_work(request, "the ask page", _ask_page, request, e.status, question, name, e.message,
                               e.type)
    return see_other(f"/ui/answers/{where.name}/{answer.trace_id}")


@router.post("/ui/ask/stream")
async def ask_stream(request: Request):
    """The ask form answered as it is decided, for the page's script (serve/web/static/saksi.js): server-sent events
    with each claim rendered once nothing can withhold it (pipeline/release.py), then the address of the whole
    answer's page. A question the service refuses to take is the ask page with its error, as `POST /ui/ask` gives it
    (the script then submits the form as a page does without script)."""
    form = await request.form()
    question, name = str(form.get("question", "")), str(form.get("collection") or DEFAULT_COLLECTION)
    svc = service(request)
    try:
        body = CollectionAnswerRequest(question=question)
        where = svc.where(key_of(request), name)
        events = svc.answer_stream(where, body)
    except (ValidationError, ApiError):
        return await ask(request)
    lang = lang_of(request)

    async def told():
        async for kind, data in events:
            if kind == "claim":
                html = env.get_template("_live_claim.html").render(
                    L=labels(lang), lang=lang, c=data["claim"], collection=where.name,
                    standing_words=lambda st: status.standing_words(StandingOut.model_validate(st), lang))
                out = {"html": html}
            elif kind == "retrieval":
                out = {"text": labels(lang)["live"]["found"].format(n=data["records"])}
            elif kind == "retry":
                out = {"text": labels(lang)["live"]["retry"]}
            elif kind == "done":
                out = {"url": f"/ui/answers/{where.name}/{data['trace_id']}"}
            elif kind == "error":
                out = {"text": data["error"]["message"]}
            else:
                continue
            yield f"event: {kind}\ndata: {json.dumps(out, ensure_ascii=False)}\n\n".encode()

    return StreamingResponse(told(), media_type="text/event-stream", headers={"Cache-Control": "no-store"})


# --- an answer ----------------------------------------------------------------------------------


def recorded(request: Request, name: str, trace_id: str):
    """Where (the key and the collection), the trace and the answer as it was shown, its words in the page's
    language (ApiError when not allowed or absent)."""
    svc = service(request)
    where = svc.where(key_of(request), name)
    trace = svc.trace(where, trace_id)
    request.state.trace_check = svc.checked_trace(where, trace_id)
    return where, trace, svc.recorded(trace, lang_of(request))


@router.get("/ui/answers/{name}/{trace_id}")
async def answer_page(request: Request, name: CollectionName, trace_id: TraceId, saved: int | None = None,
                      problem: str | None = None, claim: int | None = None):
    return await page_work(request, "the answer page", _answer_page, request, name, trace_id, saved, problem, claim)


def _answer_page(request: Request, name: str, trace_id: str, saved: int | None, problem: str | None,
                 claim: int | None):
    from pipeline.reviews import REJECT_REASONS

    where, trace, result = recorded(request, name, trace_id)
    answer = AnswerResponse.of(result)
    lang = lang_of(request)
    indexed = list(enumerate(answer.claims))
    return render(request, "answer.html", answer=answer, collection=where.name, trace=trace,
                  trace_check=request.state.trace_check,
                  supported=[(i, c) for i, c in indexed if c.status == "supported"],
                  demoted=[(i, c) for i, c in indexed if c.status != "supported"],
                  reviews=service(request).reviews(where, trace_id), saved=saved,
                  problem=problem if problem in ("reason_required",) else None, request_claim=claim,
                  doc_of={c.chunk.chunk_id: c.chunk.doc_id for p in trace.parts for a in p.attempts
                          for c in a.candidates},
                  chunk_lang={c.chunk.chunk_id: c.chunk.lang for p in trace.parts for a in p.attempts
                              for c in a.candidates},
                  reject_reasons={code: words[lang] for code, words in REJECT_REASONS.items()},
                  reason_words=lambda r: reason_words(r, lang),
                  standing_words=lambda s: status.standing_words(s, lang), direct_pieces=_markers,
                  docs={d.doc_id: d for d in answer.documents},
                  unmentioned_words=lambda ts: unmentioned_text(ts, lang),
                  as_of_words=lambda a: status.as_of_words(a, lang))


@router.get("/ui/answers/{name}/{trace_id}/export.{fmt}")
async def export_answer(request: Request, name: CollectionName, trace_id: TraceId, fmt: str):
    """The answer as a working paper takes it (pipeline/rendering/export.py): Markdown or DOCX, with the trace id and the
    SHA-256 of its trace file."""
    return await page_work(request, "the export", _export, request, name, trace_id, fmt)


def _export(request: Request, name: str, trace_id: str, fmt: str):
    from fastapi.responses import Response

    from pipeline.rendering import export
    from pipeline.audit import file_hash

    if f".{fmt}" not in export.FORMATS:
        raise ApiError(404, "not_found", f"no export format {fmt!r}: md or docx")
    where, trace, result = recorded(request, name, trace_id)
    digest = file_hash(where.collection.traces / f"{trace_id}.json")
    lang = lang_of(request)
    if fmt == "md":
        body, media = export.markdown(result, digest, lang).encode("utf-8"), "text/markdown; charset=utf-8"
    else:
        body = export.docx(result, digest, lang)
        media = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
    return Response(body, media_type=media,
                    headers={"Content-Disposition": f'attachment; filename="saksi-{trace_id}.{fmt}"'})


def _markers(text: str) -> list[str | int]:
    """The direct answer line cut at its `[n]` markers: text pieces, and each marker's claim number."""
    out: list[str | int] = []
    for k, piece in enumerate(_MARKER.split(text)):
        if piece:
            out.append(int(piece) if k % 2 else piece)
    return out


_MARKER = re.compile(r"\[(\d+)\]")


@router.post("/ui/reviews")
async def review(request: Request):
    form = await request.form()
    name, trace_id = str(form.get("collection", "")), str(form.get("trace_id", ""))
    try:
        claim = int(str(form.get("claim", "")))
    except ValueError:
        raise ApiError(422, "invalid_request", "claim: not a claim index") from None
    return await page_work(request, "saving the review", _review, request, form, name, trace_id, claim)


def _review(request: Request, form, name: str, trace_id: str, claim: int):
    from pipeline.errors import ReviewError

    where, trace, result = recorded(request, name, trace_id)
    page = f"/ui/answers/{where.name}/{trace_id}"
    decision = str(form.get("decision", ""))
    # one form holds the three buttons and the reason list: a reason picked before pressing Accept is not kept
    reason = (str(form.get("reason", "")).strip() or None) if decision != "accepted" else None
    try:
        service(request).review(where, trace_id, result, claim, decision, reason, str(form.get("note", "")))
    except ReviewError as e:
        code = "reason_required" if decision == "rejected" and reason is None else None
        if code:
            return see_other(f"{page}?problem={code}&claim={claim}#claim-{claim}")
        raise ApiError(422, "invalid_review", str(e)) from None
    return see_other(f"{page}?saved={claim}#claim-{claim}")
