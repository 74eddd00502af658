"""One file → everything the corpus writes for it: rendition, chunks, tokens, references.

A pure function of the file and the profile, shared by the in-process ingest
(pipeline/corpus/ingestor.py) and the bulk Ray Data job (serve/bulk_ingest.py), so both produce
exactly the same chunks and ids.
"""
from __future__ import annotations

import hashlib
import logging
import re
from collections import Counter
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

from ..analysis import build_analyzers
from ..config import Profile
from ..errors import IngestError
from ..types import Chunk, Document
from ..categories import CategoryTagger
from .chunker import Chunker
from .source import read_source
from ..references import extract_references

log = logging.getLogger(__name__)

TEXTS_DIR = "texts"
_TOP_PASAL = re.compile(r"^(?:Pasal|Article) \w+$")


def rendition_path(data_dir: Path, doc_id: str, text: str) -> Path:
    """Named by content, so a new version never overwrites the file the old chunks point at."""
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]
    return Path(data_dir).resolve() / TEXTS_DIR / f"{doc_id}.{digest}.txt"


@dataclass
class PreparedDocument:
    document: Document
    text: str                      # the rendition
    chunks: list[Chunk]
    tokens: list[list[str]]
    references: list[tuple[str, int, dict]] = field(default_factory=list)  # (chunk_id, ordinal, reference)
    manifest: dict = field(default_factory=dict)
    source_hash: str = ""


class DocumentPreparer:
    """Holds the profile's chunker, tagger and analysers; `prepare` is deterministic."""

    def __init__(self, profile: Profile, data_dir: Path):
        self.profile = profile
        self.data_dir = Path(data_dir)
        self.chunker = Chunker(profile.settings.chunking.max_chars)
        self.tagger = CategoryTagger(profile.categories)
        self.analyzers = build_analyzers(profile.analysis)

    def prepare(self, path: Path) -> PreparedDocument:
        """IngestError for a file that cannot be read, whatever the reason: one odd file is
        reported and skipped, never the end of an ingest (the cause is logged with -v)."""
        try:
            return self._prepare(path)
        except IngestError:
            raise
        except Exception as e:
            log.debug("preparing %s failed", path, exc_info=True)
            raise IngestError(str(path), f"could not be read ({type(e).__name__}: {e})") from None

    def _prepare(self, path: Path) -> PreparedDocument:
        source = read_source(path)
        limits = self.profile.settings.limits
        if len(source.text) > limits.max_document_chars:
            raise IngestError(str(path), f"{len(source.text):,} characters of text; the limit is "
                                         f"{limits.max_document_chars:,} (limits.max_document_chars): split it")
        doc = replace(source.document, rendition=str(rendition_path(self.data_dir, source.document.doc_id,
                                                                    source.text)))
        chunks = self.chunker.chunks(doc, source.text, source=source)
        if not chunks:
            raise IngestError(doc.original, "no citable text found")
        chunks = [replace(c, categories=self.tagger.tag(c.text, c.heading, c.location)) for c in chunks]
        analyzer = self.analyzers.get(doc.lang, self.analyzers["id"])
        tokens = [analyzer.tokens(f"{c.title} {c.heading} {c.location} {c.text}") for c in chunks]
        references = [(c.chunk_id, k, asdict(ref))
                      for c in chunks for k, ref in enumerate(extract_references(c.text, doc.lang))]
        density = len(references) / max(1, len(source.text)) * 1000
        if len(references) > limits.max_references or (len(references) > 200 and density > limits.max_reference_density):
            raise IngestError(str(path), f"{len(references):,} cross-references ({density:.1f} per 1,000 characters); "
                                         f"the limits are {limits.max_references:,} and "
                                         f"{limits.max_reference_density:g} per 1,000 (limits.max_references, "
                                         "limits.max_reference_density): not a text saksi can cite")
        units = list(dict.fromkeys(c.unit.split("#", 1)[1] for c in chunks))
        manifest = {
            "format": doc.fmt, "pages": doc.pages, "pages_without_text": list(doc.pages_without_text),
            "units": len(units), "pasal": sum(1 for u in units if _TOP_PASAL.match(u)),
            "spans": sum(len(c.spans) for c in chunks), "examples": sum(c.is_example for c in chunks),
            "references": len(references), "cleaning": dict(source.clean.stats),
            "metadata_from": dict(source.meta.provenance),
            "categories": dict(Counter(t for c in chunks for t in c.categories)),
        }
        return PreparedDocument(doc, source.text, chunks, tokens, references, manifest, source.source_hash)
