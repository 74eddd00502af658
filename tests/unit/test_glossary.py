"""configs/glossary.yaml: well-formed, every Indonesian form real, and the legal vocabulary reaches the analyser.

The occurrence check reads the regulation texts beside the repository (../shared/data: the four
Government Regulations of legal_qa, the PMK and regional regulations, the Undang-Undang archive)
and the project's own sample corpus, and skips when the shared data is not there.
"""
from __future__ import annotations

import re
import tarfile
import unicodedata
from pathlib import Path

import pytest
import yaml

from pipeline.analysis import QueryAnalyzer, build_analyzers
from pipeline.config import load_profile

from ..conftest import SAMPLE, SHARED_DATA

pytestmark = pytest.mark.unit

GLOSSARY = Path(__file__).resolve().parents[2] / "configs" / "glossary.yaml"

# Accounting-standard (PSAK) terms that are right but that no text here uses: the shared data holds
# no accounting standard, and the sample corpus does not need these words.
NOT_IN_ANY_TEXT = {"penghentian pengakuan", "pesewa", "liabilitas sewa", "aset hak guna"}


class _NoDuplicates(yaml.SafeLoader):
    """A loader that refuses a mapping key given twice (PyYAML keeps the last one silently)."""


def _mapping(loader: yaml.SafeLoader, node: yaml.MappingNode, deep: bool = False):
    seen: dict = {}
    for key_node, _ in node.value:
        key = loader.construct_object(key_node, deep=deep)
        if key in seen:
            raise AssertionError(f"glossary key {key!r} on lines {seen[key]} and {key_node.start_mark.line + 1}")
        seen[key] = key_node.start_mark.line + 1
    return loader.construct_mapping(node, deep=deep)


_NoDuplicates.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _mapping)


def _glossary() -> dict:
    return yaml.load(GLOSSARY.read_text(encoding="utf-8"), Loader=_NoDuplicates)


def test_glossary_has_no_duplicate_keys():
    g = _glossary()
    assert set(g) == {"en_to_id", "synonyms"}
    assert len(g["en_to_id"]) > 1000


def test_glossary_entries_are_lowercase_trimmed_and_distinct():
    for en, ids in _glossary()["en_to_id"].items():
        assert isinstance(en, str) and en == en.strip().lower() and "  " not in en, en
        assert ids and len(ids) == len(set(ids)), en
        for i in ids:
            assert isinstance(i, str) and i == i.strip().lower() and "  " not in i, (en, i)


# --------------------------------------------------------------------------- occurrence in real texts


def _fold(text: str) -> str:
    return " ".join(unicodedata.normalize("NFKC", text).lower().split())


def _occurs(form: str, text: str) -> bool:
    """`form` as whole words in `text` (both folded): not inside a longer word or a hyphenated one."""
    i = text.find(form)
    while i >= 0:
        before = text[i - 1] if i else " "
        after = text[i + len(form)] if i + len(form) < len(text) else " "
        if not (before.isalnum() or before == "-") and not (after.isalnum() or after == "-"):
            return True
        i = text.find(form, i + 1)
    return False


def _laws(archive: Path) -> str:
    parts = []
    with tarfile.open(archive, "r:xz") as tar:
        for member in tar:
            if member.isfile() and member.name.endswith(".md"):
                parts.append(_fold(tar.extractfile(member).read().decode("utf-8", errors="replace")))
    return "\n".join(parts)


def test_every_indonesian_form_occurs_in_the_regulations():
    legal_qa = SHARED_DATA / "legal_qa" / "corpus"
    regulations = SHARED_DATA / "regulations" / "pmk"
    laws = SHARED_DATA / "peraturan" / "uu.tar.xz"
    if not (legal_qa.is_dir() and regulations.is_dir() and laws.is_file()):
        pytest.skip(f"the shared regulation texts are not at {SHARED_DATA}")
    small = "\n".join(_fold(p.read_text(encoding="utf-8"))
                      for d in (legal_qa, regulations, SAMPLE) for p in sorted(d.glob("*.md")))
    forms = {i for ids in _glossary()["en_to_id"].values() for i in ids}
    assert NOT_IN_ANY_TEXT <= forms, "a form listed as absent from every text is no longer in the glossary"
    left = sorted(f for f in forms - NOT_IN_ANY_TEXT if not _occurs(f, small))
    if left:
        text = _laws(laws)
        left = [f for f in left if not _occurs(f, text)]
    assert not left, f"Indonesian forms that no regulation text contains: {left}"


def test_occurs_matches_whole_words_only():
    text = _fold("Pemberi Kerja TKA wajib membayar\nDKPTKA; pekerja/buruh, undang-undang.")
    assert _occurs("pemberi kerja tka", text)
    assert _occurs("buruh", text) and _occurs("dkptka", text)
    assert _occurs("membayar dkptka", text)  # a line break folds to a space
    assert not _occurs("dkptka pekerja", text)  # punctuation between the words does not
    assert not _occurs("kerja tk", text)
    assert not _occurs("undang", text)  # part of a hyphenated word


# --------------------------------------------------------------------------- the analyser sees the new vocabulary


@pytest.fixture(scope="module")
def qa():
    p = load_profile()
    return QueryAnalyzer(build_analyzers(p.analysis), p.glossary, p.normalisation)


def _groups(qa, question: str) -> dict:
    return {t.term: t for t in qa.term_groups(qa.normalise(question), "en")}


def test_labour_phrases_become_one_group_with_the_indonesian_term_and_abbreviation(qa):
    g = _groups(qa, "How long is the approval of a fixed-term contract for foreign workers valid?")
    assert {"how long", "fixed-term contract", "foreign workers", "approval", "valid"} <= set(g)
    assert ("pkwt",) in g["fixed-term contract"].alternatives
    assert ("tka",) in g["foreign workers"].alternatives
    assert ("tenaga", "kerja", "asing") in g["foreign workers"].alternatives  # "kerja" counts (configs/analysis.yaml)
    assert ("jangka", "waktu") in g["how long"].alternatives
    assert g["foreign workers"].matched_by(qa.all_tokens("Pemberi Kerja TKA wajib memiliki RPTKA"))


@pytest.mark.parametrize(("question", "term", "alternative"), [
    ("What is a work accident?", "work accident", ("celaka", "kerja")),
    ("What does the death benefit cover?", "death benefit", ("jkm",)),
    ("Who may punish civil servants?", "civil servants", ("pns",)),
    ("Which disciplinary punishment applies?", "disciplinary punishment", ("hukum", "disiplin")),
    ("Within how many working days?", "working days", ("hari", "kerja")),
    ("Is the contribution paid monthly?", "contribution", ("iuran",)),
    ("What severance pay is due?", "severance pay", ("uang", "sangon")),
    ("Who issues the permit?", "permit", ("izin",)),
    ("What is the penalty of imprisonment?", "imprisonment", ("pidana", "penjara")),
    ("When was it promulgated?", "promulgated", ("undang",)),
])
def test_english_legal_terms_reach_their_indonesian_forms(qa, question, term, alternative):
    assert alternative in _groups(qa, question)[term].alternatives


def test_inflections_reach_the_intended_key_not_a_stem_neighbour(qa):
    g = _groups(qa, "Several heirs received three times the wage; this constitutes a violation")
    assert ("sangon",) not in g["several"].alternatives  # "several" and "severance" share a stem
    assert ("terima",) in g["received"].alternatives and ("piutang",) not in g["received"].alternatives
    assert ("waktu",) not in g["times"].alternatives  # "times" is "kali", not "time"
    assert all("dasar" not in alt for alt in g["constitutes"].alternatives)  # not "constitution"
