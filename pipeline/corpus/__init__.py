"""A corpus in a data directory: its layout and state (`DataDir`), the opened chunk store and
indexes (`Corpus`), and the one ingest loop that writes them (`Ingestor`)."""
from .corpus import CHUNKER_VERSION, Corpus, check_collections, rules_fingerprint
from .datadir import DEFAULT_COLLECTION, CorpusState, DataDir
from .ingestor import EMBED_BATCH, IngestReport, Ingestor, LocalPreparation, Preparation, Upload

__all__ = ["CHUNKER_VERSION", "Corpus", "check_collections", "rules_fingerprint", "CorpusState", "DataDir", "DEFAULT_COLLECTION", "EMBED_BATCH", "IngestReport",
           "Ingestor", "LocalPreparation", "Preparation", "Upload"]
