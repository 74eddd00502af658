"""The HTTP app one Ingress replica serves (`make_app`): the JSON API's routes (serve/api.py) and the web
page's (serve/web/), the middlewares that act on the headers alone (the key, then the body's size), and
the handlers that give every error one shape, `{"error": {"type", "message"}}` (on the web page's paths,
the same error as a page).

The app is built in the replica, around that replica's service: nothing of it is pickled, and every
route reaches the service through `request.app.state.service`.

Every endpoint but `/healthz` needs `Authorization: Bearer <key>` (serve/auth.py; keys from
`saksi keys create`): 401 without a valid key, 403 outside the key's role or collections,
429 with `Retry-After` past its rate. Errors have a 4xx status for a bad request, 404 for what
does not exist, 413 for an oversized upload, and 503 with `Retry-After` when the service is
overloaded or a component it needs is down. The routes are in serve/api.py.
"""
from __future__ import annotations

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from pipeline import __version__

from . import web
from .api import router
from .auth import Authenticate, Guard, is_page
from .body_limit import BodyLimit, default_limits
from .errors import ApiError
from .service import Service
from .web.common import error_page

DESCRIPTION = ("Answers with exact quotes from the ingested records, or refuses and says what is missing. "
               "Every endpoint but /healthz needs `Authorization: Bearer <key>` (`saksi keys create`).")


def make_app(service: Service, guard: Guard) -> FastAPI:
    """The app over `service`: its routes, its page, its key check (`guard`) and its body limits
    (runtime.max_upload_bytes)."""
    app = FastAPI(title="saksi", version=__version__, description=DESCRIPTION)
    app.state.service, app.state.guard = service, guard  # the routes' (and the sign-in page's) way to them
    # both act on the headers alone, before anything reads the body: the key first (outermost), then the body's size
    app.add_middleware(BodyLimit, limit_for=default_limits(service.runtime.max_upload_bytes))
    app.add_middleware(Authenticate, guard=lambda: guard)
    web.install(app)  # the reviewer's page at / and /ui/ (serve/web/)
    app.include_router(router)
    app.add_exception_handler(ApiError, _api_error)
    app.add_exception_handler(StarletteHTTPException, _http_error)
    app.add_exception_handler(RequestValidationError, _invalid)
    return app


def _error(status: int, kind: str, message: str, headers: dict[str, str] | None = None) -> JSONResponse:
    return JSONResponse({"error": {"type": kind, "message": message}}, status_code=status, headers=headers)


async def _api_error(request: Request, e: ApiError):
    """The error shape; on the web page's paths, the same error as a page (its status, its words)."""
    if is_page(request.url.path):
        return error_page(request, e)
    return _error(e.status, e.type, e.message, e.headers)


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
        headers = {**(headers or {}), "Allow": ", ".join(_allowed(request.app, request.url.path))}
    return _error(e.status_code, kind, message, headers)


def _allowed(app: FastAPI, path: str) -> list[str]:
    methods: set[str] = set()
    for route in app.routes:
        regex, route_methods = getattr(route, "path_regex", None), getattr(route, "methods", None)
        if regex is not None and route_methods and regex.match(path):
            methods |= set(route_methods)
    return sorted(methods)


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
