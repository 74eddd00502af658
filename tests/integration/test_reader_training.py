"""`saksi train reader` on a small slice of the shared training data: deterministic, and better
than the coverage heuristic it replaces on lines it never saw."""
from __future__ import annotations

import json

import numpy as np
import pytest

from pipeline.cli import main
from pipeline.answer_reader import FEATURES
from pipeline.answer_reader.model import ReaderModel
from pipeline.answer_reader.training import in_calibration, examples_from, fit_trees, train_reader

from ..conftest import SHARED_DATA

pytestmark = pytest.mark.integration

IDK_TRAIN = SHARED_DATA / "idk_mrc" / "train.json"
IDK_VALID = SHARED_DATA / "idk_mrc" / "valid.json"
LAWS = SHARED_DATA / "peraturan" / "uu.tar.xz"


@pytest.fixture(scope="module")
def data():
    if not IDK_TRAIN.is_file():
        pytest.fail(f"shared training data not found at {IDK_TRAIN} (set SAKSI_SHARED_DATA)")
    return IDK_TRAIN


def test_training_twice_gives_the_same_weights_byte_for_byte(data, profile, tmp_path):
    """Prose and mined law questions both; the second run asks the law questions in one process, the
    first in two: the weights do not depend on it."""
    if not LAWS.is_file():
        pytest.fail(f"shared laws not found at {LAWS} (set SAKSI_SHARED_DATA)")
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    train_reader([data], [IDK_VALID], profile, a, limit=40, laws=LAWS, law_limit=10, workers=2)
    train_reader([data], [IDK_VALID], profile, b, limit=40, laws=LAWS, law_limit=10, workers=1)
    assert a.read_bytes() == b.read_bytes()
    spec = json.loads(a.read_text())
    assert spec["features"] == list(FEATURES) and set(spec["domains"]) == {"prose", "regulation"}
    assert all(set(c) == {"logistic", "trees"} for c in spec["training"]["compared"].values())
    assert spec["training"]["data"][0]["sha256"] and spec["training"]["validation"]["idk_mrc"]
    mined = spec["training"]["mined"]
    assert mined["laws"] == 10 and mined["questions"] > 50 and spec["training"]["validation"]["laws"]
    assert spec["training"]["licences"]["peraturan"]


def _auc(score: np.ndarray, y: np.ndarray) -> float:
    """Probability that a random answer line outranks a random other line (ties count half)."""
    order = np.argsort(score, kind="stable")
    ranks = np.empty(len(score))
    s = score[order]
    i = 0
    while i < len(s):  # average ranks over ties
        j = i
        while j + 1 < len(s) and s[j + 1] == s[i]:
            j += 1
        ranks[order[i:j + 1]] = (i + j) / 2 + 1
        i = j + 1
    pos = y == 1
    return float((ranks[pos].sum() - pos.sum() * (pos.sum() + 1) / 2) / (pos.sum() * (~pos).sum()))


def test_the_reader_beats_coverage_on_held_out_lines(data, profile):
    ex = examples_from([data], profile, limit=250)
    held = np.array([in_calibration(q) for q in ex.qids])
    fit, test = ex.rows(~held), ex.rows(held)
    assert test.y.sum() >= 20 and (test.y == 0).sum() >= 20
    spec = {"features": list(FEATURES), **fit_trees(fit), "calibration": {"x": [0.0, 1.0], "y": [0.0, 1.0]}}
    reader = ReaderModel(spec, "slice").raw_probability(test.x)
    coverage = test.x[:, FEATURES.index("coverage")]
    assert _auc(reader, test.y) > _auc(coverage, test.y) + 0.05


def test_the_trees_are_the_average_of_one_booster_per_seed(data, profile):
    """fit_trees grows one booster per TREE_SEEDS seed on the same rows and stores them as one forest with every leaf
    divided by their number: the forest's log-odds are the mean of the boosters' own (LightGBM's raw scores)."""
    import lightgbm as lgb

    from pipeline.answer_reader.training import TREE_PARAMS, TREE_ROUNDS, TREE_SEEDS

    ex = examples_from([data], profile, limit=120)
    spec = {"features": list(FEATURES), **fit_trees(ex), "calibration": {"x": [0.0, 1.0], "y": [0.0, 1.0]}}
    assert len(TREE_SEEDS) >= 2 and spec["boosters"] == len(TREE_SEEDS)
    assert len(spec["trees"]) == len(TREE_SEEDS) * TREE_ROUNDS
    raw = [lgb.train({**TREE_PARAMS, "seed": s}, lgb.Dataset(ex.x, ex.y, feature_name=list(FEATURES)),
                     num_boost_round=TREE_ROUNDS).predict(ex.x, raw_score=True) for s in TREE_SEEDS]
    assert not np.allclose(raw[0], raw[1])  # the seeds grow different boosters
    p = np.clip(ReaderModel(spec, "slice").raw_probability(ex.x), 1e-9, 1 - 1e-9)
    np.testing.assert_allclose(np.log(p / (1 - p)), np.mean(raw, axis=0), atol=1e-4)


def test_the_command_prints_validation_figures(data, tmp_path, capsys):
    out = tmp_path / "w.json"
    assert main(["train", "reader", "--data", str(SHARED_DATA), "--limit", "15", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert out.is_file() and "truthfulness" in printed and "idk_mrc" in printed and "tydiqa_id" in printed
    assert "questions mined from 15 laws" in printed and "definition" in printed


def test_missing_training_data_is_a_clear_error(tmp_path, capsys):
    assert main(["train", "reader", "--data", str(tmp_path)]) == 2
    assert "training data not found" in capsys.readouterr().err


def test_the_cross_encoder_command_mines_the_laws_and_writes_weights_that_load(tmp_path, capsys):
    """`saksi train cross-encoder` on 3 laws and 6 questions: the README's command, end to end."""
    from pipeline.answer_reader.neural import CrossEncoder

    if not LAWS.is_file():
        pytest.fail(f"shared laws not found at {LAWS} (set SAKSI_SHARED_DATA)")
    out, mined = tmp_path / "ce.bin", tmp_path / "mined.jsonl.xz"
    assert main(["train", "cross-encoder", "--data", str(SHARED_DATA), "--laws", "3", "--mined", str(mined),
                 "--mine-only", "--out", str(out)]) == 0
    assert mined.is_file() and not out.exists()  # mined, written, not trained: another machine may train it
    assert "mined questions written to" in capsys.readouterr().err
    assert main(["train", "cross-encoder", "--data", str(SHARED_DATA), "--mined", str(mined), "--questions", "6",
                 "--storage", "q8", "--out", str(out)]) == 0
    captured = capsys.readouterr()
    assert "6 questions from 3 laws" in captured.out and "mined questions read from" in captured.err
    assert main(["train", "cross-encoder", "--data", str(SHARED_DATA), "--mine-only"]) == 2
    assert "--mine-only needs --mined" in capsys.readouterr().err
    ce = CrossEncoder(out)
    assert ce.header["training"]["laws"] == 3 and len(ce.header["training"]["examples"]) == 5
    assert ce.header["storage"] == "q8"
    assert np.isfinite(ce.logits("Apa yang dimaksud dengan Pekerja?", ["Pekerja adalah setiap orang."])).all()
    assert main(["train", "cross-encoder", "--data", str(tmp_path)]) == 2
    assert "training data not found" in capsys.readouterr().err
    assert main(["train", "cross-encoder", "--data", str(SHARED_DATA), "--questions", "-1"]) == 2
    assert "0 (all) or more" in capsys.readouterr().err


def test_a_second_archive_of_government_regulations_is_mined_beside_the_laws(profile, tmp_path):
    """`--regulations`: the PPs of a second archive (scripts/pp_archive.py's layout) add their questions to the laws'."""
    import io
    import tarfile

    from pipeline.answer_reader.training import law_examples

    if not LAWS.is_file():
        pytest.fail(f"shared laws not found at {LAWS} (set SAKSI_SHARED_DATA)")
    pp = ("PERATURAN PEMERINTAH REPUBLIK INDONESIA NOMOR 2 TAHUN 2016 TENTANG PENGELOLAAN ARSIP PERCOBAAN\n"
          "Pasal 1\nDalam Peraturan Pemerintah ini yang dimaksud dengan:\n"
          "1. Arsip Percobaan adalah rekaman kegiatan dalam berbagai bentuk dan media.\n"
          "2. Unit Kearsipan adalah satuan kerja yang bertugas mengelola arsip.\n"
          "Pasal 2\n(1) Arsip Percobaan wajib disimpan paling lama 10 (sepuluh) tahun oleh lembaga negara.\n"
          "(2) Penyimpanan sebagaimana dimaksud pada ayat (1) dilaksanakan oleh Unit Kearsipan.\n").encode()
    archive = tmp_path / "pp.tar.xz"
    with tarfile.open(archive, "w:xz") as tar:
        info = tarfile.TarInfo("pp/2016/2.md")
        info.size = len(pp)
        tar.addfile(info, io.BytesIO(pp))
    _, alone = law_examples(LAWS, profile, limit=2, workers=1)
    _, both = law_examples([LAWS, archive], profile, limit=2, workers=1)
    assert alone["laws"] == 2 and both["laws"] == 3
    assert both["questions"] > alone["questions"]


def test_a_regulations_file_that_is_not_an_archive_is_refused_before_training(tmp_path, capsys):
    bad = tmp_path / "pp.tar.xz"
    bad.write_text("not an archive", encoding="utf-8")
    out = tmp_path / "w.json"
    assert main(["train", "reader", "--data", str(SHARED_DATA), "--regulations", str(bad), "--out", str(out)]) == 2
    assert "not a tar archive" in capsys.readouterr().err and not out.exists()
    assert main(["train", "reader", "--data", str(SHARED_DATA), "--regulations", str(tmp_path / "none.tar.xz"),
                 "--out", str(out)]) == 2
    assert "training data not found" in capsys.readouterr().err


def fake_english_set(n: int = 60) -> dict:
    """A test double for XQuAD: `n` English paragraphs written here from a template (three facts each, one asked),
    in SQuAD's official layout."""
    towns = ["Aldham", "Brisk", "Corran", "Dunmore", "Elsby", "Farrow", "Glenby", "Harwick", "Ilsley", "Jarrow"]
    things = ["harbour", "library", "market", "school", "museum", "station"]
    paragraphs = []
    for k in range(n):
        town, thing = towns[k % len(towns)], things[k % len(things)]
        year, count = 1800 + 7 * k, 10 + 3 * k
        context = (f"The {thing} of {town} was built in {year} by the county council. It employs {count} people "
                   f"throughout the year. Visitors reach it by the northern road from the river.")
        question = (f"In which year was the {thing} of {town} built?" if k % 2 else
                    f"How many people does the {thing} of {town} employ?")
        answer = str(year) if k % 2 else str(count)
        paragraphs.append({"context": context, "qas": [{"id": f"fake-en-{k}", "question": question,
                                                        "answers": [{"text": answer,
                                                                     "answer_start": context.index(answer)}]}]})
    return {"version": "1.1", "data": [{"title": "Towns", "paragraphs": paragraphs}]}


def test_an_english_set_teaches_its_own_scorer_and_its_licence_is_recorded(profile, tmp_path):
    """`--prose`: an English reading-comprehension set is told English and read as the generator reads an English
    record; its answer sentences are the positive rows; it trains the English scorer and leaves the Indonesian prose
    scorer exactly as the Indonesian sets alone make it; the weights record the file and its licence."""
    from pipeline.eval.datasets import load_dataset
    from pipeline.answer_reader.training import dataset_language, prose_source

    path = tmp_path / "xquad.en.json"
    path.write_text(json.dumps(fake_english_set(200)), encoding="utf-8")
    assert dataset_language(load_dataset(path)) == "en"
    assert dataset_language(load_dataset(IDK_VALID, limit=20)) == "id"
    ex = examples_from([path], profile)
    assert set(ex.question[ex.y == 1].tolist()) == set(range(200))  # every question's answer sentence is a row
    assert prose_source(path) == "xquad" and prose_source(IDK_TRAIN) == "idk_mrc"
    out, alone = tmp_path / "w.json", tmp_path / "alone.json"
    train_reader([IDK_TRAIN, path], [IDK_VALID], profile, out, limit=200)
    train_reader([IDK_TRAIN], [IDK_VALID], profile, alone, limit=200)
    spec, without = json.loads(out.read_text()), json.loads(alone.read_text())
    assert set(spec["domains"]) == {"prose", "regulation", "english"} and set(without["domains"]) == {"prose",
                                                                                                        "regulation"}
    assert spec["domains"]["prose"] == without["domains"]["prose"]
    training = spec["training"]
    assert training["licences"]["xquad"].startswith("CC BY-SA 4.0") and training["licences"]["idk_mrc"]
    assert [d["file"] for d in training["data"]] == ["idk_mrc/train.json", f"{tmp_path.name}/xquad.en.json"]
    assert training["validation"]["xquad"]["0.5"]["questions"] >= 1


def test_a_missing_prose_set_is_a_clear_error(tmp_path, capsys):
    assert main(["train", "reader", "--data", str(SHARED_DATA), "--prose", str(tmp_path / "none.json"),
                 "--out", str(tmp_path / "w.json")]) == 2
    assert "none.json" in capsys.readouterr().err
