"""What every page shares: the templates, the language, the signed-in key, the error page."""
from __future__ import annotations

from typing import Any
from urllib.parse import quote, urlencode

import jinja2
from fastapi import Request
from fastapi.responses import HTMLResponse, RedirectResponse

from pipeline.decision import category_words
from pipeline.keys import ApiKey

from ..errors import ApiError, within
from . import HERE
from .labels import LANGS, labels, note_words

LANG_COOKIE = "saksi_lang"

env = jinja2.Environment(loader=jinja2.FileSystemLoader(HERE / "templates"), autoescape=True,
                         undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True)
env.filters["urlq"] = lambda s: quote(str(s), safe="")
env.globals["urlencode"] = urlencode


def pages_text(pages, lang: str = "en") -> str:
    """[3, 3] -> "p. 3" ("hlm. 3"); [3, 4] -> "pp. 3–4" ("hlm. 3–4"); nothing for a format without pages."""
    if not pages:
        return ""
    L = labels(lang)
    return f"{L['page']} {pages[0]}" if pages[0] == pages[1] else f"{L['pages']} {pages[0]}–{pages[1]}"


env.filters["pages"] = jinja2.pass_context(lambda ctx, pages: pages_text(pages, ctx["lang"]))
# a count in the page's language: 12,345 in English, 12.345 in Indonesian
env.filters["count"] = jinja2.pass_context(
    lambda ctx, n: f"{int(n):,}".replace(",", "." if ctx["lang"] == "id" else ","))


def service(request: Request):
    """The running service (`serve.service.Service`: the Ingress puts it on the app's state when it starts): what a
    page may do, the same as the API."""
    return request.app.state.service


async def page_work(request: Request, what: str, fn, /, *args, **kwargs):
    """A page's own work (reading its trace, rebuilding the answer, rendering): in a worker thread within
    runtime.page_timeout_s (`serve.errors.within`), never on the event loop."""
    return await within(service(request).runtime.page_timeout_s, what, fn, *args, **kwargs)


def key_of(request: Request) -> ApiKey:
    return request.state.api_key


def lang_of(request: Request) -> str:
    """The page's language: the toggle's cookie, else the browser's first choice of id/en, else id."""
    chosen = request.cookies.get(LANG_COOKIE)
    if chosen in LANGS:
        return chosen
    for part in request.headers.get("accept-language", "").split(","):
        tag = part.split(";")[0].strip().lower()[:2]
        if tag in LANGS:
            return tag
    return "id"


def render(request: Request, template: str, status: int = 200, **context: Any) -> HTMLResponse:
    lang = lang_of(request)
    key = getattr(request.state, "api_key", None)
    here = request.url.path + (f"?{request.url.query}" if request.url.query else "")
    html = env.get_template(template).render(L=labels(lang), lang=lang, key=key, here=here,
                                             note_words=lambda n: note_words(n, lang),
                                             category_words=lambda c: category_words(c, lang), **context)
    return HTMLResponse(html, status_code=status, headers={"Cache-Control": "no-store"})


def error_page(request: Request, e: ApiError) -> HTMLResponse:
    """A typed error as a page: its status, its message, never a stack trace. A page's route
    raises ApiError; the app's handler for it (serve/api.py) calls this on the page's paths."""
    out = render(request, "error.html", status=e.status, error=e)
    out.headers.update(e.headers)  # Retry-After and the like, as the API sends them
    return out


def back_to(path: str | None, default: str = "/") -> str:
    """A redirect target from a form or query: a path on this site only (no open redirect)."""
    if not path or not path.startswith("/") or path.startswith("//") or "\\" in path:
        return default
    return path


def see_other(path: str) -> RedirectResponse:
    return RedirectResponse(path, status_code=303, headers={"Cache-Control": "no-store"})
