"""Reading documents (parsers → cleaning → metadata) and cutting them into citable chunks."""
from .chunker import Chunker, chunk_id
from .parsers import SUPPORTED_SUFFIXES
from .source import SourceFile, expand_paths, read_source

__all__ = ["Chunker", "chunk_id", "SUPPORTED_SUFFIXES", "SourceFile", "expand_paths", "read_source"]
