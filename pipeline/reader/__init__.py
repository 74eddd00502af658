"""The reader: P(this sentence, in this context, answers this question), learned from open
Indonesian reading-comprehension data and read by the extractive generator."""
from .features import FEATURES, Featurizer, SentenceView, question_type
from .model import DEFAULT_WEIGHTS, ReaderModel, load_reader
from .sentences import SentenceCandidate, candidate_sentences

__all__ = ["FEATURES", "Featurizer", "SentenceView", "question_type", "DEFAULT_WEIGHTS", "ReaderModel", "load_reader",
           "SentenceCandidate", "candidate_sentences"]
