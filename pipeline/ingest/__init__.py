"""Reading documents (parsers → cleaning → metadata) and cutting them into citable chunks."""
from .categories import CategoryTagger
from .chunker import Chunker, chunk_id
from .parsers import SUPPORTED_SUFFIXES
from .reader import SourceFile, expand_paths, read_source

__all__ = ["CategoryTagger", "Chunker", "chunk_id", "SUPPORTED_SUFFIXES", "SourceFile", "expand_paths",
           "read_source"]
