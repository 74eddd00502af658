"""Dataset loading: both SQuAD 2.0 shapes and JSONL read into one shape; bad items skipped."""
from __future__ import annotations

import json

import pytest

from pipeline.eval.datasets import EvalDataError, answer_key, contains_answer, load_dataset

pytestmark = pytest.mark.unit

PARAS = [
    {"context": "Candi Borobudur dibangun pada abad ke-9 oleh wangsa Syailendra.",
     "qas": [{"id": "a1", "question": "Kapan Borobudur dibangun?", "is_impossible": False,
              "answers": [{"text": "abad ke-9", "answer_start": 999}]},  # a wrong offset is ignored
             {"id": "a2", "question": "Siapa arsitek Borobudur?", "is_impossible": True, "answers": []}]},
    {"context": "Danau Toba terletak di Sumatera Utara.",
     "qas": [{"id": "b1", "question": "Di provinsi mana Danau Toba?", "is_impossible": False,
              "answers": [{"text": "Sumatera Utara", "answer_start": 22}, {"text": "Sumatera Utara", "answer_start": 22}]}]},
]


def test_flat_and_official_shapes_read_the_same(tmp_path):
    flat = tmp_path / "flat.json"
    flat.write_text(json.dumps(PARAS))
    official = tmp_path / "official.json"
    official.write_text(json.dumps({"version": "v2.0", "data": [{"title": "Wisata", "paragraphs": PARAS}]}))
    a, b = load_dataset(flat), load_dataset(official)
    assert (a.format, b.format) == ("squad-flat", "squad-official")
    assert a.questions == b.questions
    assert [p.text for p in a.passages] == [p.text for p in b.passages]
    assert b.passages[0].title == "Wisata" and a.passages[0].title is None
    q = {x.qid: x for x in a.questions}
    assert q["a1"].golds == ("abad ke-9",) and q["a1"].answerable and q["a1"].passage == "p00000"
    assert not q["a2"].answerable and q["a2"].golds == ()
    assert q["b1"].golds == ("Sumatera Utara",)  # duplicates folded
    assert q["b1"].passage == "p00001"


def test_limit_takes_first_passages_with_all_their_questions(tmp_path):
    f = tmp_path / "d.json"
    f.write_text(json.dumps(PARAS))
    ds = load_dataset(f, limit=1)
    assert len(ds.passages) == 1 and [q.qid for q in ds.questions] == ["a1", "a2"]
    with pytest.raises(EvalDataError):
        load_dataset(f, limit=0)


def test_malformed_items_are_reported_and_skipped(tmp_path):
    bad = PARAS + [{"qas": []}, {"context": "Teks.", "qas": [{"id": "c1"}, {"id": "c2", "question": "Apa?",
                                                                   "is_impossible": False, "answers": []},
                                                           {"id": "a1", "question": "dup?", "answers": [{"text": "x"}]}]}]
    f = tmp_path / "d.json"
    f.write_text(json.dumps(bad))
    ds = load_dataset(f)
    assert [q.qid for q in ds.questions] == ["a1", "a2", "b1"]
    reasons = " | ".join(ds.skipped)
    assert "no 'context'" in reasons and "no 'question'" in reasons and "no gold answer" in reasons
    assert "duplicate id 'a1'" in reasons


def test_jsonl_with_contexts_corpus_paths_and_bad_lines(tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.md").write_text("Tarif PPh sewa adalah 10%.")
    lines = [
        {"id": "j1", "question": "Di mana Danau Toba?", "answers": ["Sumatera Utara"], "answerable": True,
         "context": "Danau Toba terletak di Sumatera Utara."},
        {"id": "j2", "question": "Berapa dalamnya Danau Toba?", "answers": [], "answerable": False,
         "context": "Danau Toba terletak di Sumatera Utara."},
        {"id": "j3", "question": "Berapa tarif PPh sewa?", "answers": ["10%"], "answerable": True, "corpus": "docs"},
        "not an object",
    ]
    f = tmp_path / "q.jsonl"
    f.write_text("\n".join(json.dumps(x) for x in lines) + "\n{broken\n\n")
    ds = load_dataset(f)
    assert ds.format == "jsonl"
    assert [q.qid for q in ds.questions] == ["j1", "j2", "j3"]
    assert len(ds.passages) == 1 and ds.questions[1].passage == ds.passages[0].pid
    assert ds.questions[2].passage is None and ds.corpus_paths == (docs.resolve(),)
    assert len(ds.skipped) == 2
    assert [q.qid for q in load_dataset(f, limit=1).questions] == ["j1", "j2"]


def test_unreadable_datasets_are_clear_errors(tmp_path):
    with pytest.raises(EvalDataError, match="no dataset file"):
        load_dataset(tmp_path / "missing.json")
    f = tmp_path / "x.json"
    f.write_text("{not json")
    with pytest.raises(EvalDataError, match="not JSON"):
        load_dataset(f)
    f.write_text(json.dumps({"something": 1}))
    with pytest.raises(EvalDataError, match="expected SQuAD"):
        load_dataset(f)
    f.write_text(json.dumps([{"context": "x", "qas": []}]))
    with pytest.raises(EvalDataError, match="no usable questions"):
        load_dataset(f)
    f.write_bytes(b"\xff\xfe[]")
    with pytest.raises(EvalDataError, match="not UTF-8"):
        load_dataset(f)


def test_answers_match_whole_words_after_normalisation():
    assert answer_key("  Sumatera-Utara!  ") == "sumatera utara"
    assert contains_answer("Danau Toba terletak di SUMATERA  UTARA.", ["Sumatera Utara"])
    assert contains_answer("dibangun pada abad ke-9 oleh", ["abad ke 9"])
    assert not contains_answer("pada tahun 1995", ["5"])
    assert not contains_answer("apa saja", [""])


def test_jsonl_reference_is_read_and_a_malformed_one_skips_its_row(tmp_path):
    from pipeline.eval.datasets import Reference

    lines = [
        {"id": "r1", "question": "Rencana apa?", "answers": ["rencana penyerapan"], "context": "Rencana penyerapan.",
         "reference": {"law": "PP  34/2021", "pasal": ["12"], "ayat": "2", "huruf": "H"}},
        {"id": "r2", "question": "Apa saja?", "answers": ["Pasal 36-42"], "context": "Rencana penyerapan.",
         "reference": {"law": "PP 34/2021", "pasal": ["36", 37, "(38)"], "ayat": None, "huruf": None}},
        {"id": "r3", "question": "Definisi?", "answers": ["x"], "context": "Rencana penyerapan.",
         "reference": {"law": "PP 44/2015", "pasal": "1", "ayat": None, "huruf": "9"}},
        {"id": "r4", "question": "Tanpa?", "answers": ["x"], "context": "Rencana penyerapan."},
        {"id": "bad1", "question": "?", "answers": ["x"], "context": "c", "reference": {"pasal": ["1"]}},
        {"id": "bad2", "question": "?", "answers": ["x"], "context": "c", "reference": {"law": "PP 1/2020", "pasal": []}},
        {"id": "bad3", "question": "?", "answers": ["x"], "context": "c",
         "reference": {"law": "PP 1/2020", "pasal": ["1"], "ayat": "dua"}},
        {"id": "bad4", "question": "?", "answers": ["x"], "context": "c", "reference": "PP 1/2020 Pasal 1"},
        {"id": "bad5", "question": "?", "answers": ["x"], "context": "c",
         "reference": {"law": "PP 1/2020", "pasal": ["1"], "bab": "II"}},
    ]
    path = tmp_path / "ref.jsonl"
    path.write_text("\n".join(json.dumps(x) for x in lines))
    ds = load_dataset(path)
    q = {x.qid: x for x in ds.questions}
    assert set(q) == {"r1", "r2", "r3", "r4"}
    assert q["r1"].reference == Reference("PP 34/2021", ("12",), "2", "h")
    assert q["r2"].reference == Reference("PP 34/2021", ("36", "37", "38"), None, None)
    assert q["r3"].reference == Reference("PP 44/2015", ("1",), None, "9")
    assert q["r4"].reference is None
    assert [s.split(":")[0] for s in ds.skipped] == ["bad1", "bad2", "bad3", "bad4", "bad5"]
    assert "law" in ds.skipped[0] and "non-empty" in ds.skipped[1] and "'dua'" in ds.skipped[2]
