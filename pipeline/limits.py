"""Limits every entry point applies alike (`saksi ask`, `saksi batch`, `POST /v1/answer`).

The values live in the profile (`limits:` in configs/<profile>.yaml), so the CLI, which
needs no Ray, and the served app read the same ones.
"""
from __future__ import annotations

from .config import LimitsSettings
from .errors import QuestionTooLongError


def check_question(question: str, limits: LimitsSettings) -> str:
    """The question, stripped; QuestionTooLongError when it is over the cap."""
    question = question.strip()
    if len(question) > limits.max_question_chars:
        raise QuestionTooLongError(len(question), limits.max_question_chars)
    return question
