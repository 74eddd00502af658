"""Limits every entry point applies alike (`saksi ask`, `saksi batch`, `POST /v1/answer`).

The values live in the profile (`limits:` in configs/<profile>.yaml), so the CLI, which
needs no Ray, and the served app read the same ones.
"""
from __future__ import annotations

from .config import LimitsSettings
from .errors import QuestionTooLongError, TooManyPartsError
from .query import decompose


def check_question(question: str, limits: LimitsSettings) -> str:
    """The question, stripped; QuestionTooLongError over the length cap, TooManyPartsError when it
    asks more things at once than `max_parts` (each part costs a whole retrieval and answer, so a
    question of many parts was the cheap way to make one request cost many)."""
    question = question.strip()
    if len(question) > limits.max_question_chars:
        raise QuestionTooLongError(len(question), limits.max_question_chars)
    parts = len(decompose(question))
    if parts > limits.max_parts:
        raise TooManyPartsError(parts, limits.max_parts)
    return question
