"""The NLI judge on a tiny random-init DeBERTa-v2 (tiny.build_nli): real loading, label
mapping, windowing and batching. Random weights say nothing about entailment, so the
verdict logic is proved with FakeNLIModel, a test double that returns chosen logits per
window while the real tokenizer and the real windowing run."""
from __future__ import annotations

import asyncio
import json
import math
import shutil
import threading
from types import SimpleNamespace

import pytest
import torch
from transformers import AutoConfig, AutoModelForSequenceClassification, AutoTokenizer

from pipeline.backends.nli import NLIJudge
from pipeline.config import JudgeSettings
from pipeline.errors import ConfigError
from pipeline.models import ModelUnavailable
from pipeline.types import JudgeInput

from . import tiny

CLAIM = "tarif pajak penghasilan final"
ENTAIL_MARK, WEAK_ENTAIL_MARK, CONTRA_MARK = "disetor", "dipotong", "sanksi"
LABELS = ("entailed", "neutral", "contradicted")


def _filler() -> list[str]:
    """Distinct vocabulary words (so each premise token's position is unambiguous), none of
    them a marker or a claim word."""
    skip = {ENTAIL_MARK, WEAK_ENTAIL_MARK, CONTRA_MARK, *CLAIM.split()}
    return [w for w in dict.fromkeys(tiny._TEXT.split()) if w.isalpha() and w not in skip]


FILLER = _filler()


def paragraph(n: int, marks: dict[int, str] | None = None) -> str:
    """`n` filler words with marker words put at the given word positions."""
    words = FILLER[:n]
    assert len(words) == n, "not enough distinct vocabulary words"
    for pos, mark in (marks or {}).items():
        words[pos] = mark
    return " ".join(words)


def settings(model, **kw) -> JudgeSettings:
    return JudgeSettings(backend="nli", model=str(model), device="cpu", **kw)


def run(judge, items):
    return asyncio.run(judge.judge(items))


class FakeNLIModel:
    """Test double for the classifier: each row's logits are those of the first marker word
    found in its tokens, else `default`. Records every call's rows and thread."""

    def __init__(self, model_dir, marks: dict[str, list[float]] | None = None, default=(0.0, 0.0, 0.0),
                 fail: bool = False):
        self.config = AutoConfig.from_pretrained(model_dir)
        tok = AutoTokenizer.from_pretrained(model_dir)
        self.marks = {tok.convert_tokens_to_ids(w): v for w, v in (marks or {}).items()}
        self.default = list(default)
        self.fail = fail
        self.rows: list[list[int]] = []
        self.batches: list[int] = []
        self.threads: list[threading.Thread] = []

    def __call__(self, input_ids, attention_mask, **_):
        self.threads.append(threading.current_thread())
        if self.fail:
            raise RuntimeError("CUDA out of memory (simulated)")
        self.batches.append(len(input_ids))
        out = []
        for ids, mask in zip(input_ids.tolist(), attention_mask.tolist()):
            row = [t for t, m in zip(ids, mask) if m]
            self.rows.append(row)
            out.append(next((v for t, v in self.marks.items() if t in row), self.default))
        return SimpleNamespace(logits=torch.tensor(out, dtype=torch.float32))


class CountingModel:
    """Test double that passes through to a real classifier, counting forward calls."""

    def __init__(self, model):
        self.model, self.config, self.batches = model, model.config, []

    def eval(self):
        self.model.eval()

    def __call__(self, **inputs):
        self.batches.append(len(inputs["input_ids"]))
        return self.model(**inputs)


def logits(config, **by_label: float) -> list[float]:
    """A logit vector placed by label name through the config (for the fake's outputs)."""
    out = [0.0] * len(config.id2label)
    for name, value in by_label.items():
        out[config.label2id[name]] = value
    return out


def prob(vec: list[float], index: int) -> float:
    return round(float(torch.softmax(torch.tensor(vec, dtype=torch.float32), dim=-1)[index]), 6)


def variant(nli_dir, dest, id2label: dict[int, str]):
    """A copy of the tiny model with the same weights and another id2label."""
    shutil.copytree(nli_dir, dest)
    cfg = json.loads((dest / "config.json").read_text())
    cfg["id2label"] = {str(k): v for k, v in id2label.items()}
    cfg["label2id"] = {v: k for k, v in id2label.items()}
    (dest / "config.json").write_text(json.dumps(cfg))
    return dest


@pytest.fixture(scope="module")
def real_model(nli_dir):
    return AutoModelForSequenceClassification.from_pretrained(nli_dir).eval()


# --- labels --------------------------------------------------------------------------


def test_label_mapping_follows_config_not_index_order(nli_dir, tmp_path):
    upper = variant(nli_dir, tmp_path / "upper", {0: "ENTAILMENT", 1: "NEUTRAL", 2: "CONTRADICTION"})
    item = [JudgeInput(CLAIM, paragraph(10))]
    # the same raw logits, index 0 high: contradiction in the tiny model's config, entailment in the variant's
    v_tiny, = run(NLIJudge(settings(nli_dir), model=FakeNLIModel(nli_dir, default=(4, 0, 0))), item)
    v_upper, = run(NLIJudge(settings(upper), model=FakeNLIModel(upper, default=(4, 0, 0))), item)
    assert v_tiny.label == "contradicted" and v_tiny.score == prob([4, 0, 0], 1)
    assert v_upper.label == "entailed" and v_upper.score == prob([4, 0, 0], 0)

    # real weights (identical in both copies): the score is the entailment column its own config names
    enc = AutoTokenizer.from_pretrained(nli_dir)(item[0].premise, item[0].claim, return_tensors="pt")
    model = AutoModelForSequenceClassification.from_pretrained(nli_dir).eval()
    with torch.no_grad():
        raw = model(**enc).logits[0].tolist()
    r_tiny, = run(NLIJudge(settings(nli_dir)), item)
    r_upper, = run(NLIJudge(settings(upper)), item)
    assert r_tiny.score == pytest.approx(prob(raw, 1), abs=1e-6)
    assert r_upper.score == pytest.approx(prob(raw, 0), abs=1e-6)
    assert r_tiny.score != r_upper.score


@pytest.mark.parametrize("id2label", [{0: "LABEL_0", 1: "LABEL_1", 2: "LABEL_2"},
                                      {0: "entailment", 1: "not_entailment"}])
def test_a_model_without_nli_labels_is_refused(tmp_path, id2label):
    path = tiny.build_nli(tmp_path / "generic", id2label=id2label)
    with pytest.raises(ConfigError) as e:
        NLIJudge(settings(path))
    msg = str(e.value)
    assert str(path) in msg and repr(id2label[1]) in msg and "contradiction" in msg


# --- windowing and precedence ----------------------------------------------------------


def _split(row: list[int], tok) -> tuple[list[int], list[int]]:
    """[CLS] premise [SEP] claim [SEP] → (premise ids, claim ids)."""
    sep = row.index(tok.sep_token_id)
    assert row[0] == tok.cls_token_id and row[-1] == tok.sep_token_id
    return row[1:sep], row[sep + 1:-1]


@pytest.mark.parametrize("stride,max_length,overlap", [(128, 512, None), (8, 512, 8), (8, 32, 8)])
def test_windows_cover_the_paragraph_and_keep_the_whole_claim(nli_dir, stride, max_length, overlap):
    tok = AutoTokenizer.from_pretrained(nli_dir)
    fake = FakeNLIModel(nli_dir)
    judge = NLIJudge(settings(nli_dir, window_stride=stride, max_length=max_length), model=fake)
    limit = min(max_length, 64)
    assert judge.max_tokens == limit
    text = paragraph(130)
    v, = run(judge, [JudgeInput(CLAIM, text)])
    premise = tok(text, add_special_tokens=False)["input_ids"]
    claim = tok(CLAIM, add_special_tokens=False)["input_ids"]
    room = limit - 3 - len(claim)
    want_overlap = overlap if overlap is not None else room // 2  # a stride wider than half a window is capped
    spans = []
    for row in fake.rows:
        assert len(row) <= limit
        part, hyp = _split(row, tok)
        assert hyp == claim  # every window reads the whole claim, as the hypothesis
        start = premise.index(part[0])
        assert premise[start:start + len(part)] == part  # a contiguous slice of the paragraph
        spans.append((start, start + len(part)))
    assert len(spans) > 1 and f"/{len(spans)} " in v.detail
    assert spans[0][0] == 0 and spans[-1][1] == len(premise)  # nothing at either end is lost
    for (s0, e0), (s1, e1) in zip(spans, spans[1:]):
        assert s0 < s1 and e0 - s1 == want_overlap  # progress, with the configured overlap


def test_a_paragraph_that_fits_is_one_window(nli_dir):
    fake = FakeNLIModel(nli_dir)
    v, = run(NLIJudge(settings(nli_dir), model=fake), [JudgeInput(CLAIM, paragraph(20))])
    assert len(fake.rows) == 1 and "window 1/1 " in v.detail


def test_entailment_is_the_best_window(nli_dir):
    cfg = AutoConfig.from_pretrained(nli_dir)
    weak, strong = logits(cfg, entailment=2.0), logits(cfg, entailment=5.0)
    fake = FakeNLIModel(nli_dir, {ENTAIL_MARK: strong, WEAK_ENTAIL_MARK: weak}, default=logits(cfg, neutral=4.0))
    judge = NLIJudge(settings(nli_dir), model=fake)
    # weak support in the first window, strong support only in the last: the last decides
    v, = run(judge, [JudgeInput(CLAIM, paragraph(130, {2: WEAK_ENTAIL_MARK, 127: ENTAIL_MARK}))])
    n = len(fake.rows)
    assert n > 2
    assert v.label == "entailed" and v.score == prob(strong, cfg.label2id["entailment"])
    assert f"window {n}/{n}" in v.detail

    # weak support alone stays below the threshold: neutral, with its own probability as the score
    fake.rows.clear()
    v2, = run(NLIJudge(settings(nli_dir, threshold=0.9), model=fake),
              [JudgeInput(CLAIM, paragraph(130, {2: WEAK_ENTAIL_MARK}))])
    assert v2.label == "neutral" and v2.score == prob(weak, cfg.label2id["entailment"]) < 0.9
    assert f"window 1/{len(fake.rows)}" in v2.detail


@pytest.mark.parametrize("entail_at,contra_at", [(2, 127), (127, 2)])
def test_a_contradiction_in_any_window_is_surfaced(nli_dir, entail_at, contra_at):
    cfg = AutoConfig.from_pretrained(nli_dir)
    yes, no = logits(cfg, entailment=4.0), logits(cfg, contradiction=4.0)
    fake = FakeNLIModel(nli_dir, {ENTAIL_MARK: yes, CONTRA_MARK: no})
    text = paragraph(130, {entail_at: ENTAIL_MARK, contra_at: CONTRA_MARK})
    v, = run(NLIJudge(settings(nli_dir), model=fake), [JudgeInput(CLAIM, text)])
    n = len(fake.rows)
    assert v.label == "contradicted"
    assert v.score == prob(yes, cfg.label2id["entailment"])  # still the best window's entailment
    first, last = "window 1/", f"window {n}/{n}"
    con_at, ent_at = (last, first) if contra_at > entail_at else (first, last)
    p = f"{prob(no, cfg.label2id['contradiction']):.3f}"
    assert f"contradiction {p} ≥ 0.5 in {con_at}" in v.detail
    assert f"entailment {p} in {ent_at}" in v.detail and "precedence" in v.detail

    # below contradiction_threshold the same paragraph is entailed
    v2, = run(NLIJudge(settings(nli_dir, contradiction_threshold=0.99), model=fake), [JudgeInput(CLAIM, text)])
    assert v2.label == "entailed" and v2.score == v.score


# --- batching, determinism, threads ----------------------------------------------------


def _items() -> list[JudgeInput]:
    return [JudgeInput(CLAIM, paragraph(n)) for n in (5, 70, 130, 20, 100)]


def test_batching_does_not_change_verdicts(nli_dir, real_model):
    wide, narrow = CountingModel(real_model), CountingModel(real_model)
    big = run(NLIJudge(settings(nli_dir, batch_size=64), model=wide), _items())
    small = run(NLIJudge(settings(nli_dir, batch_size=2), model=narrow), _items())
    pairs = sum(wide.batches)
    assert len(big) == len(small) == 5 and pairs > 5  # the long paragraphs were windowed
    assert wide.batches == [pairs]
    assert len(narrow.batches) == math.ceil(pairs / 2) and max(narrow.batches) == 2
    assert [v.label for v in small] == [v.label for v in big]
    assert [v.detail for v in small] == [v.detail for v in big]
    assert [v.score for v in small] == pytest.approx([v.score for v in big], abs=1e-6)  # padding widths differ


def test_real_model_verdicts_are_deterministic_and_well_formed(nli_dir):
    judge = NLIJudge(settings(nli_dir))
    assert next(judge.model.parameters()).dtype == torch.float32  # the judge never runs in fp16
    assert not judge.model.training
    first, again = run(judge, _items()), run(judge, _items())
    fresh = run(NLIJudge(settings(nli_dir)), _items())
    assert first == again == fresh
    for v in first:
        assert v.label in LABELS and 0.0 <= v.score <= 1.0 and v.judge == f"nli/{nli_dir}"


def test_the_model_runs_off_the_event_loop_thread(nli_dir):
    fake = FakeNLIModel(nli_dir)
    run(NLIJudge(settings(nli_dir), model=fake), [JudgeInput(CLAIM, paragraph(10))])
    assert fake.threads and all(t is not threading.main_thread() for t in fake.threads)


# --- no verdict, failures, resolution ------------------------------------------------


def test_empty_inputs_get_no_verdict_in_order(nli_dir):
    fake = FakeNLIModel(nli_dir, default=(0, 4, 0))
    judge = NLIJudge(settings(nli_dir), model=fake)
    assert run(judge, []) == [] and fake.rows == []
    out = run(judge, [JudgeInput("  ", paragraph(10)), JudgeInput(CLAIM, "\n"), JudgeInput(CLAIM, paragraph(10))])
    assert [(v.label, v.score) for v in out[:2]] == [(None, None), (None, None)]
    assert "empty claim" in out[0].detail and "empty paragraph" in out[1].detail
    assert out[2].label == "entailed" and len(fake.rows) == 1


def test_a_claim_too_long_for_the_model_gets_no_verdict(nli_dir):
    fake = FakeNLIModel(nli_dir, default=(0, 4, 0))
    v, = run(NLIJudge(settings(nli_dir), model=fake), [JudgeInput(paragraph(55), paragraph(10))])
    assert v.label is None and v.score is None and "too long" in v.detail and fake.rows == []


def test_a_model_failure_raises(nli_dir):
    # the gates turn a judge that raises into no verdict for every claim (gates.verify)
    judge = NLIJudge(settings(nli_dir), model=FakeNLIModel(nli_dir, fail=True))
    with pytest.raises(RuntimeError, match="out of memory"):
        run(judge, [JudgeInput(CLAIM, paragraph(10))])
    overflow = NLIJudge(settings(nli_dir), model=FakeNLIModel(nli_dir, default=(float("nan"), 0, 0)))
    with pytest.raises(RuntimeError, match="non-finite"):
        run(overflow, [JudgeInput(CLAIM, paragraph(10))])


def test_a_missing_model_says_how_to_fetch_it(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path))
    with pytest.raises(ModelUnavailable, match="hf download nonexistent-org/nonexistent-model"):
        NLIJudge(JudgeSettings(backend="nli", model="nonexistent-org/nonexistent-model"))


def test_the_factory_builds_it_from_a_profile(nli_dir):
    from pipeline.backends import make_judge
    from pipeline.config import load_profile

    p = load_profile("lite")
    p = p.model_copy(update={"settings": p.settings.model_copy(
        update={"judge": JudgeSettings(backend="nli", model=str(nli_dir))})})
    judge = make_judge(p)
    assert isinstance(judge, NLIJudge) and judge.name == f"nli/{nli_dir}"
    v, = run(judge, [JudgeInput(CLAIM, paragraph(30))])
    assert v.label in LABELS and 0.0 <= v.score <= 1.0 and "window 1/1" in v.detail
