"""A document's size and cross-references are capped when it is read (issue 27, the reference bomb): one such file
is reported and skipped with the limit it broke, and a real regulation's references stay well inside the caps."""
from __future__ import annotations

import pytest

from pipeline.config import load_profile
from pipeline.errors import IngestError
from pipeline.ingest.prepare import DocumentPreparer

HEAD = "---\nid: {id}\ntitle: Uji batas\ndoc_type: regulation\nlang: id\n---\n\nPasal 1\n\n"


def _preparer(tmp_path, **limits) -> DocumentPreparer:
    profile = load_profile()
    if limits:
        settings = profile.settings.model_copy(update={"limits": profile.settings.limits.model_copy(update=limits)})
        profile = profile.model_copy(update={"settings": settings})
    return DocumentPreparer(profile, tmp_path / "data")


def test_a_reference_bomb_is_refused_with_the_limit_it_broke(tmp_path) -> None:
    bomb = tmp_path / "bom.md"
    bomb.write_text(HEAD.format(id="bom") + "Lihat " + " dan ".join(f"Pasal {i}" for i in range(2, 600)) + ".\n",
                    encoding="utf-8")
    with pytest.raises(IngestError) as e:
        _preparer(tmp_path).prepare(bomb)
    assert "cross-references" in str(e.value) and "limits.max_reference_density" in str(e.value)


def test_a_regulation_with_ordinary_references_is_read(tmp_path) -> None:
    body = "".join(f"Pasal {i}\n\n(1) Ketentuan ini berlaku sebagaimana dimaksud dalam Pasal {i - 1} ayat (2) "
                   f"untuk setiap Wajib Pajak yang memenuhi syarat dan tata cara yang ditetapkan.\n\n"
                   for i in range(2, 300))
    ok = tmp_path / "biasa.md"
    ok.write_text(HEAD.format(id="biasa") + body, encoding="utf-8")
    prepared = _preparer(tmp_path).prepare(ok)
    assert prepared.manifest["references"] > 200  # over the count where density is checked, and within it


def test_a_document_over_the_size_limit_is_refused(tmp_path) -> None:
    big = tmp_path / "besar.md"
    big.write_text(HEAD.format(id="besar") + "Tarif pajak adalah sepuluh persen. " * 200, encoding="utf-8")
    with pytest.raises(IngestError) as e:
        _preparer(tmp_path, max_document_chars=2_000).prepare(big)
    assert "limits.max_document_chars" in str(e.value)
