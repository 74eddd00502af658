"""Reading source files and cutting them into citable chunks."""
from .categories import CategoryTagger
from .chunker import Chunker, chunk_id
from .reader import SUPPORTED_SUFFIXES, SourceFile, expand_paths, read_source

__all__ = ["CategoryTagger", "Chunker", "chunk_id", "SUPPORTED_SUFFIXES", "SourceFile", "expand_paths", "read_source"]
