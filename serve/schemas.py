"""The API's request bodies (and the answer with its optional trace): pydantic models, no FastAPI, shared by
the routes (serve/api.py), the service (serve/service.py) and the web page's forms (serve/web/). Every
response is one of the models in `pipeline/responses.py` (the same ones `saksi ask --json` prints)."""
# no `from __future__ import annotations`: FastAPI must see the real types of the fields
import base64
import binascii
import datetime as dt
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from pipeline.config import MAX_QUESTION_CHARS_CEILING
from pipeline.keys import COLLECTION_NAME
from pipeline.responses import AnswerResponse
from pipeline.trace import Trace

TRACE_ID = r"^[0-9a-f]{32}$"

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
    stream: bool = Field(False, description="answer as server-sent events (text/event-stream): analysis, retrieval, "
                                            "each claim once its gates have passed and nothing can withhold it, "
                                            "demoted claims, then the answer or refusal and done")
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
