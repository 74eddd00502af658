"""The error hierarchy: each error names the stage it came from.

A refusal is a normal result, never one of these. These are for things that went wrong:
a file that could not be read, a configuration that does not validate, an index that
does not match its chunk store.
"""
from __future__ import annotations


class SaksiError(Exception):
    """Base class; `stage` says where in the pipeline the problem arose."""

    stage = "saksi"

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message

    def __str__(self) -> str:
        return f"[{self.stage}] {self.message}"


class ConfigError(SaksiError):
    stage = "config"


class IngestError(SaksiError):
    """A single source could not be ingested; the rest of the corpus still is."""

    stage = "ingest"

    def __init__(self, path: str, message: str):
        super().__init__(f"{path}: {message}")
        self.path = path
        self.reason = message


class CorpusIndexError(SaksiError):
    """An index is missing, or disagrees with the chunk store."""

    stage = "index"


class GenerationError(SaksiError):
    stage = "generation"


class TraceError(SaksiError):
    stage = "trace"


class QuestionRejected(SaksiError):
    """A question over one of the profile's `limits` (CLI, batch and API alike); `kind` is the
    API's error type."""

    stage = "question"
    kind = "invalid_question"


class QuestionTooLongError(QuestionRejected):
    """Longer than `limits.max_question_chars`."""

    kind = "question_too_long"

    def __init__(self, length: int, limit: int):
        super().__init__(f"the question is {length} characters long; the limit is {limit} "
                         "(limits.max_question_chars in the profile)")
        self.length, self.limit = length, limit


class TooManyPartsError(QuestionRejected):
    """More questions in one than `limits.max_parts`: each part is a whole retrieval and answer."""

    kind = "too_many_parts"

    def __init__(self, parts: int, limit: int):
        super().__init__(f"the question asks {parts} things at once; the limit is {limit} (limits.max_parts in "
                         "the profile): ask them separately")
        self.parts, self.limit = parts, limit


class KeyManagementError(SaksiError):
    """A key command that cannot be done: an unknown id, a bad role, collection or authority."""

    stage = "keys"


class UnknownCollectionError(SaksiError):
    """A collection that was never created (`saksi ingest --collection NAME` creates one)."""

    stage = "collection"


class ReviewError(SaksiError):
    """A reviewer's decision that cannot be recorded: an unknown decision or reason, a rejection
    without a reason, a note too long, a malformed trace id or claim index."""

    stage = "review"
