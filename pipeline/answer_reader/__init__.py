"""The reader: P(this answer, in this context, answers this question), learned from open
Indonesian reading-comprehension data and from question/answer pairs mined from Indonesian
laws, and read by the extractive generator."""
from .answers import ELISION, KINDS, AnswerCandidate, answer_candidates
from .features import FEATURES, AnswerView, Featurizer, answer_view, question_type
from .model import DEFAULT_WEIGHTS, ReaderModel, load_reader

__all__ = ["FEATURES", "Featurizer", "AnswerView", "question_type", "DEFAULT_WEIGHTS", "ReaderModel", "load_reader",
           "AnswerCandidate", "answer_candidates", "answer_view", "ELISION", "KINDS"]
