"""The corpus: a collection's documents, one document's outline and references, and uploads.

`/ui/corpus` lists what `saksi corpus ls` lists (the Retriever's `coverage`, the same rows as
`GET /v1/corpus`) for the default collection or `?collection=`; a key that may use several
collections gets a selector. `/ui/documents/{collection}/{doc_id}` is `saksi corpus show`'s report
for people: metadata with where each field came from, the outline (each entry opens the evidence
view at its first passage), references out (resolved ones link to their target, unresolved ones
say why) and in, near-duplicates, pages that need OCR, the full text and the original file.

A curator (or admin) uploads files with a multipart form; the page builds the API's own
`IngestRequest` and goes through `Ingress._ingest`, so an upload from the page has the same
limits, provenance, authority ceiling and audit record as one through `POST /v1/ingest`.
"""
from __future__ import annotations

import base64
import logging
from pathlib import PurePosixPath
from typing import Annotated

from fastapi import APIRouter, Path, Query, Request
from pydantic import ValidationError
from starlette.datastructures import UploadFile as FormFile
from starlette.exceptions import HTTPException as StarletteHTTPException

from pipeline.corpus import DEFAULT_COLLECTION
from pipeline.keys import COLLECTION_NAME
from pipeline.responses import CorpusResponse, IngestResponse

from ..errors import ApiError
from ..schemas import IngestRequest, UploadFile
from .common import key_of, page_work, render, service
from .evidence import DocId, retrieved_document
from .pages import _collections

log = logging.getLogger(__name__)

router = APIRouter()

CollectionName = Annotated[str, Path(pattern=COLLECTION_NAME)]

MAX_FILES = 50  # IngestRequest.files allows at most this many
# the metadata a document page shows, in this order (the file paths on the server are not shown)
SHOWN_FIELDS = ("doc_id", "cite_as", "title", "doc_type", "issuer", "number", "year", "authority", "published",
                "promulgated", "effective", "lang", "illustrative", "url", "fmt", "pages")


async def _corpus_page(request: Request, name: str, upload: IngestResponse | None = None):
    svc, key = service(request), key_of(request)
    where = svc.where(key, name)
    listing: CorpusResponse = await svc.coverage(where)
    return await page_work(request, "the corpus page", render, request, "corpus.html", collection=where.name,
                           listing=listing, collections=_collections(request), can_upload=key.has_role("curator"),
                           upload=upload, max_files=MAX_FILES,
                           max_mb=f"{svc.runtime.max_upload_bytes / 1_000_000:g}")


@router.get("/ui/corpus")
async def corpus_page(request: Request, collection: str = DEFAULT_COLLECTION):
    return await _corpus_page(request, collection)


def _file_name(raw: str) -> str:
    """The name a browser sent, without any folder part (some send a whole client-side path)."""
    return PurePosixPath(raw.replace("\\", "/")).name


def _invalid_upload(e: ValidationError, name: str) -> ApiError:
    """The API's refusal of one uploaded file, naming it (422)."""
    first = e.errors()[0]
    if tuple(first.get("loc", ())) == ("name",):
        return ApiError(422, "invalid_request", f"{name!r} is not an accepted file name: it must start with a letter "
                                                "or digit, use only letters, digits, '.', '_' and '-', and end in "
                                                ".md, .markdown, .txt, .pdf, .html, .htm or .docx")
    return ApiError(422, "invalid_request", f"{name}: {first['msg']}")


@router.post("/ui/corpus/{name}/upload")
async def upload(request: Request, name: CollectionName):
    """Files from the page's form into the collection, through the API's own upload path."""
    svc = service(request)
    where = svc.where(key_of(request), name, "curator", create=True)  # 403 before the body is read
    try:
        form = await request.form(max_files=MAX_FILES + 1, max_fields=20)
    except StarletteHTTPException as e:
        raise ApiError(400, "invalid_request", f"the upload form cannot be read: {e.detail}") from None
    try:
        files = [f for f in form.getlist("files") if isinstance(f, FormFile) and (f.filename or f.size)]
        if not files:
            raise ApiError(422, "invalid_request", "files: choose at least one file")
        if len(files) > MAX_FILES:
            raise ApiError(422, "invalid_request", f"files: at most {MAX_FILES} files at once")
        uploads = [(_file_name(f.filename or ""), await f.read()) for f in files]
    finally:
        await form.close()
    parts = []
    for n, data in uploads:
        try:
            parts.append(UploadFile(name=n, content_base64=base64.b64encode(data).decode("ascii")))
        except ValidationError as e:
            raise _invalid_upload(e, n) from None
    result = await svc.ingest(where, IngestRequest(files=parts).files)  # 1 to MAX_FILES files, as checked above
    return await _corpus_page(request, where.name, upload=result)


@router.get("/ui/documents/{name}/{doc_id}")
async def document_page(request: Request, name: CollectionName, doc_id: DocId,
                        refs_from: Annotated[int, Query(ge=0)] = 0):
    collection, report = await retrieved_document(request, name, doc_id, "document", refs_from=refs_from)
    return await page_work(request, "the document page", _document_page, request, collection, report)


def _document_page(request: Request, collection: str, report: dict):
    d, m = report["document"], report["manifest"]
    sources = m.get("metadata_from", {})
    fields = [(k, d.get(k), sources.get("id" if k == "doc_id" else k)) for k in SHOWN_FIELDS
              if d.get(k) not in (None, "", [], ())]
    refs = report["references"]
    page = f"/ui/documents/{collection}/{d['doc_id']}?refs_from="
    earlier = f"{page}{max(0, refs['from'] - refs['shown'])}#refs-out-h" if refs["from"] > 0 else None
    later = (f"{page}{refs['from'] + refs['shown']}#refs-out-h"
             if refs["from"] + refs["shown"] < max(refs["out_total"], refs["in_total"]) else None)
    return render(request, "document.html", collection=collection, doc=d, manifest=m, fields=fields,
                  outline=report["outline"], refs_out=refs["out"], refs_in=refs["in"], refs=refs,
                  refs_earlier=earlier, refs_later=later, near_duplicates=report["near_duplicates"],
                  ocr_pages=list(d.get("pages_without_text") or ()),
                  original_name=PurePosixPath(str(d.get("original") or "")).name, has_text=report["has_text"])
