"""The reviewer's web page, served by the Ingress beside the JSON API (docs/ui.md).

Server-rendered HTML (FastAPI + Jinja2 templates in `templates/`), a little plain JavaScript and
CSS in `static/`: nothing is built, nothing is fetched from elsewhere, so it works offline.
The page lives at `/` and under `/ui/`; the API under `/v1/` is unchanged. A person signs in
with an API key (kept in an HttpOnly, SameSite=Strict cookie; serve/auth.py checks it like a
bearer key) and sees only the collections and actions that key may use.

- `pages.py`: sign-in, the ask form, the answer with its receipts, the reviewer's decisions;
- `evidence.py`: a document's text with the quoted span highlighted, its pages and references;
- `trace_view.py`: an answer's trace, and replaying it;
- `corpus_view.py`: the documents of a collection, one document's outline, uploads (curators).

Every route calls the running service (`serve.service.Service`, on `request.app.state.service`) and
nothing else of the Ingress, so the page uses the same orchestrator, keys, limits and audit log as the API.
"""
from __future__ import annotations

from pathlib import Path

from fastapi import FastAPI
from fastapi.staticfiles import StaticFiles

HERE = Path(__file__).resolve().parent


def install(app: FastAPI) -> None:
    """Add the page's routes and its static files to the API's app."""
    from . import corpus_view, evidence, pages, trace_view

    app.mount("/ui/static", StaticFiles(directory=HERE / "static"), name="ui-static")
    for module in (pages, evidence, trace_view, corpus_view):
        app.include_router(module.router, include_in_schema=False)
