"""The reader: features, the numpy inference of boosted trees, and the trained weights' contract."""
from __future__ import annotations

import json

import numpy as np
import pytest

from pipeline.analysis import QueryAnalyzer, build_analyzers
from pipeline.answer_reader import FEATURES, AnswerView, Featurizer, load_reader, question_type
from pipeline.answer_reader.answers import KINDS
from pipeline.answer_reader.model import DEFAULT_WEIGHTS, ReaderModel
from pipeline.answer_reader.training import _flatten

pytestmark = pytest.mark.unit


@pytest.fixture(scope="module")
def qa(profile):
    return QueryAnalyzer(build_analyzers(profile.analysis), profile.glossary, profile.normalisation)


def _terms(qa, question):
    return tuple(qa.term_groups(qa.normalise(question), qa.language(question)))


@pytest.mark.parametrize("question,kind", [
    ("Kapan Ludwig Tieck lahir?", "when"), ("Pada tahun berapa candi itu dibangun?", "when"),
    ("Berapa lama bea masuk itu dikenakan?", "duration"), ("How long does the duty apply?", "duration"),
    ("Berapa jumlah penduduk Jakarta?", "number"), ("Siapa pendiri HootSuite?", "who"),
    ("Di manakah Santo Fransiskus dilahirkan?", "where"), ("Apa yang dimaksud dengan bea masuk?", "definition"),
    ("Mengapa Mars tidak dapat dihuni?", "why"), ("Apa ibu kota Jepang?", "what"),
])
def test_question_types(question, kind):
    assert question_type(question) == kind


def _row(qa, question, sentence, referenced="", item_text=None):
    f = Featurizer(qa.all_tokens, label_credit=0.5, passage_credit=0.5)
    view = AnswerView(sentence, 0, 0, item_text or sentence, "", referenced)
    x, _ = f.matrix(question, _terms(qa, question), [view])
    return dict(zip(FEATURES, x[0]))


def test_a_year_the_question_lacks_matches_a_when_question(qa):
    q = "Kapan Ludwig Tieck lahir?"
    born = _row(qa, q, "Ludwig Tieck lahir pada tanggal 31 Mei 1773 di Berlin, Jerman.")
    vague = _row(qa, q, "Ludwig Tieck lahir di Berlin dan menjadi penyair terkenal di Jerman.")
    assert born["q_when"] == 1 and born["novel_years"] == 1 and born["type_match"] == 1
    assert vague["novel_years"] == 0 and vague["type_match"] == 0
    assert born["coverage"] == 1.0 and vague["coverage"] >= 0.75  # "kapan" is covered by a stated date


def test_a_missing_predicate_shows_in_the_coverage_of_the_question_s_other_words(qa):
    q = "Kapan Ludwig Tieck meninggal?"
    row = _row(qa, q, "Ludwig Tieck lahir pada tanggal 31 Mei 1773 di Berlin, Jerman.")
    assert row["coverage_names"] == 1.0 and row["coverage_other"] < 1.0 and row["last_term"] == 0
    assert row["n_missing"] == 1


def test_a_referenced_span_lends_its_terms(qa):
    q = "Berapa lama bea masuk tindakan pengamanan atas impor kain tenunan dari kapas dikenakan?"
    sentence = "Bea Masuk Tindakan Pengamanan sebagaimana dimaksud dalam Pasal 2 dikenakan selama 3 (tiga) tahun."
    pasal2 = "Terhadap impor produk kain tenunan dari kapas dikenakan Bea Masuk Tindakan Pengamanan."
    alone = _row(qa, q, sentence)
    read_with = _row(qa, q, sentence, referenced=pasal2)
    assert read_with["coverage_with_refs"] == 1.0 > alone["coverage_with_refs"]
    assert read_with["coverage"] > alone["coverage"] and read_with["coverage_own"] == alone["coverage_own"]
    assert read_with["s_duration"] == 1


def test_numpy_trees_reproduce_lightgbm(tmp_path):
    import lightgbm as lgb  # the `train` extra, which `make install` installs: missing is a failure
    rng = np.random.default_rng(3)
    x = rng.normal(size=(600, len(FEATURES)))
    y = (x[:, 0] + 0.5 * x[:, 3] * x[:, 5] + rng.normal(scale=0.3, size=600) > 0).astype(float)
    params = {"objective": "binary", "num_leaves": 7, "seed": 1, "deterministic": True, "num_threads": 1,
              "verbose": -1, "force_row_wise": True}
    booster = lgb.train(params, lgb.Dataset(x, y), num_boost_round=25)
    trees = [_flatten(t["tree_structure"]) for t in booster.dump_model()["tree_info"]]
    spec = {"features": list(FEATURES), "kind": "trees", "base": 0.0, "trees": trees,
            "calibration": {"x": [0.0, 1.0], "y": [0.0, 1.0]}}
    ours = ReaderModel(spec, "test").raw_probability(x)
    assert np.allclose(ours, booster.predict(x), atol=1e-6)


def test_agreement_lifts_only_the_reader_s_best_when_the_retrieval_ranked_its_passage_first():
    """generator.agreement: the reader's best regulation candidate, in the retrieval's first passage, is
    re-read with the agreement term; every other regulation candidate without it (same order among them);
    prose candidates keep the reader's probability."""
    from pipeline.answer_reader.model import with_agreement

    p = np.array([0.4, 0.3, 0.2, 0.6])
    regulation = np.array([True, True, True, False])
    first = np.array([True, True, False, False])
    out = with_agreement(p, regulation, first, logit=0.7, agree=2.0, intercept=-0.2)
    assert out[3] == 0.6  # prose: unchanged, although it is the best of all
    assert (out >= p).all()  # each keeps the larger of its two readings: nobody is made less sure
    # the best is the prose candidate, so no regulation candidate agrees: a monotone re-reading only
    assert out[0] > out[1] > out[2] and out[0] < 0.5
    p[3] = 0.1  # now the best is regulation candidate 0, in the first passage: it agrees
    lifted = with_agreement(p, regulation, first, logit=0.7, agree=2.0, intercept=-0.2)
    assert lifted[0] > 0.8 and np.isclose(lifted[1], out[1]) and lifted[3] == 0.1
    first[0] = False  # its passage is not the retrieval's first: no agreement
    assert with_agreement(p, regulation, first, logit=0.7, agree=2.0, intercept=-0.2)[0] == out[0]
    # the best is taken within the pool (the operator's records): candidate 0 is outside it, so candidate 1,
    # the best inside and in the first passage, agrees although an outsider reads higher
    first[0] = True
    pooled = with_agreement(p, regulation, first, logit=0.7, agree=2.0, intercept=-0.2,
                            pool=np.array([False, True, True, True]))
    assert pooled[1] > 0.7 and pooled[0] == out[0]
    # a ceiling (a retry's): what it lifts reads at most that, the reader's own reading stays its own
    capped = with_agreement(p, regulation, first, logit=0.7, agree=2.0, intercept=-0.2, ceiling=0.6)
    assert capped[0] == 0.6 and (capped <= np.maximum(p, 0.6)).all() and capped[3] == p[3]
    high = np.array([0.95, 0.3, 0.2, 0.1])
    assert with_agreement(high, regulation, first, logit=0.7, agree=2.0, intercept=-0.2, ceiling=0.6)[0] == 0.95


def test_consensus_adds_only_to_an_agreeing_best_whose_passage_both_searches_ranked_first():
    """generator.agreement.consensus: the agreeing best gains it when the dense and the lexical search each
    ranked its passage first; without agreement, or for any other candidate, it adds nothing."""
    from pipeline.answer_reader.model import with_agreement

    p = np.array([0.2, 0.15, 0.1])
    regulation = np.array([True, True, True])
    first = np.array([True, True, False])
    both = np.array([True, True, True])
    kw = dict(logit=0.66, agree=1.56, intercept=-0.26)
    agreed = with_agreement(p, regulation, first, **kw)
    lifted = with_agreement(p, regulation, first, **kw, first_in_both=both, consensus=1.7)
    z = 0.66 * np.log(0.2 / 0.8) + 1.56 + 1.7 - 0.26
    assert np.isclose(lifted[0], 1 / (1 + np.exp(-z))) and lifted[0] > agreed[0] > 0.5
    assert np.isclose(lifted[1], agreed[1]) and np.isclose(lifted[2], agreed[2])  # not the best: no consensus
    # both searches agree on a passage the retrieval did not rank first: no agreement, so no consensus either
    assert np.isclose(with_agreement(p, regulation, np.array([False, True, False]), **kw, first_in_both=both,
                                     consensus=1.7)[0], with_agreement(p, regulation, np.array([False, True, False]),
                                                                       **kw)[0])
    # the searches disagree: the agreement reading alone
    assert np.allclose(with_agreement(p, regulation, first, **kw, first_in_both=~both, consensus=1.7), agreed)


def test_agreement_needs_a_reader(profile):
    from pipeline.config import GeneratorSettings

    with pytest.raises(ValueError, match="needs generator.reader"):
        GeneratorSettings(backend="extractive", agreement={"logit": 0.7, "agree": 2.0, "intercept": 0.0})


def test_the_committed_weights_load_fit_the_features_and_stay_small():
    assert DEFAULT_WEIGHTS.stat().st_size <= 30_000_000
    spec = json.loads(DEFAULT_WEIGHTS.read_text())
    assert spec["features"] == list(FEATURES)
    # every source's licence is written beside the weights: the reading-comprehension sets and the laws
    assert set(spec["training"]["licences"]) == {"idk_mrc", "tydiqa_id", "xquad", "peraturan"}
    model = load_reader()
    assert model.domains == ("prose", "regulation", "english")
    for domain in model.domains:  # each domain's scorer, calibrated on its own held-out questions
        cal = spec["domains"][domain]["calibration"]
        # increasing in the score, and (where other passages compete: prose, regulations) in its lead over their best
        assert cal["method"] == "platt-margin" and cal["coef"][0] > 0 and cal["rows"] > 1000
        assert domain == "english" or cal["coef"][1] > 0
    x = np.zeros((3, len(FEATURES)))
    p = model.probability(x)
    assert p.shape == (3,) and ((0 <= p) & (p <= 1)).all()
    x[:, FEATURES.index("regulation")] = 1.0  # the same features, read by the other domain's scorer
    assert not np.allclose(model.probability(x), p)


def test_a_regulation_sentence_is_claimed_at_the_larger_of_both_scorers_readings_unless_asked_in_english():
    from pipeline.answer_reader.model import _ITEM, calibrated, competition

    model = load_reader()
    rng = np.random.default_rng(7)
    x = rng.random((6, len(FEATURES)))
    x[:, FEATURES.index("regulation")] = 1.0
    x[:, [FEATURES.index(f"k_{k}") for k in KINDS]] = 0.0
    x[:, FEATURES.index("k_sentence")] = 1.0
    x[:, FEATURES.index("q_english")] = 0.0
    x[:, _ITEM] = np.arange(6)
    raw = model.raw_probability(x)
    alone = calibrated(model._cal["regulation"], raw, competition(raw, x[:, _ITEM], np.zeros(6, np.int64)))
    prose = x.copy()
    prose[:, FEATURES.index("regulation")] = 0.0
    assert np.allclose(model.probability(x), np.maximum(alone, model.probability(prose)))
    english = x.copy()
    english[:, FEATURES.index("q_english")] = 1.0
    raw = model.raw_probability(english)
    assert np.allclose(model.probability(english),
                       calibrated(model._cal["regulation"], raw, competition(raw, x[:, _ITEM], np.zeros(6, np.int64))))


def test_a_candidate_with_a_close_rival_elsewhere_is_less_probable_than_one_alone():
    from pipeline.answer_reader.model import calibrated, competition

    raw = np.array([0.8, 0.79, 0.8, 0.1])
    items = np.array([0, 1, 2, 2])
    groups = np.array([0, 0, 1, 1])
    margin = competition(raw, items, groups)
    assert margin[0] == pytest.approx(np.log(0.8 / 0.2) - np.log(0.79 / 0.21))  # its rival is item 1's
    assert margin[2] == 12.0  # question 1: item 2 has no rival in another item
    # another document's passage is no rival: two regulations that both answer are both shown
    assert competition(raw, items, groups, np.array([0, 1, 0, 0]))[0] == 12.0
    cal = {"coef": [1.0, 0.3], "intercept": 0.0}
    p = calibrated(cal, raw, margin)
    assert p[2] > p[0]  # the same score, alone vs with a close rival


def test_weights_for_other_features_are_refused(tmp_path):
    from pipeline.errors import ConfigError

    bad = tmp_path / "old.json"
    bad.write_text(json.dumps({"features": ["coverage"], "kind": "logistic", "calibration": {"x": [0, 1], "y": [0, 1]}}))
    with pytest.raises(ConfigError, match="saksi train reader"):
        load_reader(bad)


def _constant(z: float) -> dict:
    """A logistic scorer whose raw log-odds is `z` whatever the features, with an identity calibration."""
    n = len(FEATURES)
    return {"kind": "logistic", "mean": [0.0] * n, "scale": [1.0] * n, "coef": [0.0] * n, "intercept": z,
            "calibration": {"x": [0.0, 1.0], "y": [0.0, 1.0]}}


def test_an_english_question_of_an_english_record_is_read_by_the_english_scorer_where_the_weights_have_one():
    """The `english` domain reads a prose candidate when the question and its record are both English; an
    Indonesian record, an Indonesian question and a provision keep their scorers; weights without the domain read
    it as prose (as before it existed)."""
    prose, regulation, english = 0.1, 0.3, 0.9
    domains = {"prose": _constant(np.log(prose / (1 - prose))), "regulation": _constant(np.log(regulation / (1 - regulation)))}
    with_en = ReaderModel({"features": list(FEATURES), "domains": {**domains, "english": _constant(np.log(english / (1 - english)))}}, "t")
    without = ReaderModel({"features": list(FEATURES), "domains": domains}, "t")
    x = np.zeros((4, len(FEATURES)))
    x[:, FEATURES.index("q_english")] = [1.0, 1.0, 0.0, 1.0]
    x[3, FEATURES.index("regulation")] = 1.0
    record_en = np.array([True, False, True, True])
    assert with_en.domains == ("prose", "regulation", "english") and without.domains == ("prose", "regulation")
    assert np.allclose(with_en.raw_probability(x, record_en), [english, prose, prose, regulation])
    assert np.allclose(with_en.raw_probability(x), [prose, prose, prose, regulation])  # no record language: none English
    assert np.allclose(without.raw_probability(x, record_en), [prose, prose, prose, regulation])
