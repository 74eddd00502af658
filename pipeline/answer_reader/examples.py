"""Training examples for the answer reader: each answer candidate's features, its label, and the question it answers."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


@dataclass
class Examples:
    """Candidate sentences of many questions: features, labels, and which question each belongs to."""

    x: np.ndarray
    y: np.ndarray
    question: np.ndarray       # row -> question number
    qids: list[str] = field(default_factory=list)
    answerable: list[bool] = field(default_factory=list)
    doc: np.ndarray | None = None  # row -> its document, numbered within its question (a rival is the same document's)

    def rows(self, mask_questions: np.ndarray) -> "Examples":
        keep = mask_questions[self.question]
        return Examples(self.x[keep], self.y[keep], self.question[keep], self.qids, self.answerable,
                        None if self.doc is None else self.doc[keep])

    def only(self, mask_questions: np.ndarray) -> "Examples":
        """The questions of the mask alone, renumbered (question-level figures count only them)."""
        number = np.cumsum(mask_questions) - 1
        kept = self.rows(mask_questions)
        return Examples(kept.x, kept.y, number[kept.question].astype(np.int64),
                        [q for q, m in zip(self.qids, mask_questions) if m],
                        [a for a, m in zip(self.answerable, mask_questions) if m], kept.doc)
