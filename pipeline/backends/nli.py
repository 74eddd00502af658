"""The production judge: an NLI classifier (mDeBERTa-v3 xnli in production) that reads each
claim against the full paragraph it cites (DESIGN.md, invariant 4).

- Labels come from the model's own `config.id2label`, never from index order: checkpoints
  disagree on it (the tests' tiny model puts contradiction first). The config must name
  entailment and contradiction (neutral is optional); generic LABEL_0… names, an
  entailment/not_entailment head or any other unrecognised label is refused at load,
  because such a model cannot report the contradictions the contract surfaces.
- Windowing: a paragraph longer than the model can read is not truncated (the words that
  decide may be at the end). Its tokens are split into windows that overlap by
  `window_stride` (capped at half a window, so each window advances at least half a
  window); each window is read as premise with the whole claim as hypothesis.
- Precedence: a contradiction in ANY window (probability ≥ `contradiction_threshold`)
  makes the verdict "contradicted", even when another window entails the claim — a
  paragraph that both says and unsays a thing is a conflict to show, not a yes. Otherwise
  "entailed" when the best window's entailment probability reaches `threshold`, else
  "neutral". The score is always the best window's entailment probability.
- Precision: float32 on every device by default. bfloat16 only when `judge.dtype: bfloat16` says
  so (where it has been shown to agree with float32). float16 is refused with a ConfigError:
  mDeBERTa-v3 overflows to NaN in it (microsoft/DeBERTa#77), and the NaN check below would then
  turn every claim into no verdict. The weights are loaded in the chosen dtype explicitly, never
  in the checkpoint's own (an fp16-saved checkpoint must not come up in fp16), and checked after.
- No verdict (label None) for an empty claim or paragraph, or a claim so long that too
  little of the model's input is left for the paragraph. A failure of the model at run
  time raises; the gates turn that into no verdict for every claim (gates.verify).
"""
from __future__ import annotations

import asyncio
import threading
from dataclasses import dataclass
from typing import Any, Sequence

import torch
from transformers import AutoModelForSequenceClassification, AutoTokenizer

from ..config import JudgeSettings, judge_dtype_name
from ..errors import ConfigError
from ..models import resolve_model, torch_device
from ..types import JudgeInput, Verdict

ENTAILMENT, NEUTRAL, CONTRADICTION = "entailment", "neutral", "contradiction"
_LABEL_NAMES = {
    "entailment": ENTAILMENT, "entail": ENTAILMENT, "entailed": ENTAILMENT,
    "neutral": NEUTRAL,
    "contradiction": CONTRADICTION, "contradict": CONTRADICTION, "contradicted": CONTRADICTION,
}
# position ids start after the padding index in these families: 514 positions read 512 tokens
_OFFSET_POSITIONS = frozenset({"roberta", "xlm-roberta", "xlm-roberta-xl", "camembert"})
# tokenizers without a real limit report a huge sentinel as model_max_length
_NO_LIMIT = 1_000_000


def judge_dtype(settings: JudgeSettings) -> torch.dtype:
    """The torch dtype the judge runs in: float32 unless `dtype: bfloat16` is set; float16 (by
    `dtype` or by an explicit `fp16: true`) is a ConfigError naming microsoft/DeBERTa#77. Checked
    here too, for settings that skipped validation (model_construct, model_copy)."""
    try:
        name = judge_dtype_name(getattr(settings, "dtype", "float32"))
        if settings.fp16 and "fp16" in settings.model_fields_set:
            judge_dtype_name("float16")
    except ValueError as e:
        raise ConfigError(f"judge model {settings.model!r}: {e}") from None
    return getattr(torch, name)


def _dtype_keyword() -> str:
    """`from_pretrained` takes `dtype` from transformers 4.56 (`torch_dtype` before, deprecated since)."""
    import transformers

    try:
        major, minor = (int(p) for p in transformers.__version__.split(".")[:2])
    except ValueError:
        return "dtype"
    return "dtype" if (major, minor) >= (4, 56) else "torch_dtype"


def label_indices(id2label: dict[Any, str], model: str) -> dict[str, int]:
    """{entailment, contradiction[, neutral]} → logit index, read from the config's names
    (case-insensitive). Anything else is a ConfigError naming the model and its labels."""
    found: dict[str, int] = {}
    problems = []
    for idx, raw in sorted((int(k), str(v)) for k, v in id2label.items()):
        role = _LABEL_NAMES.get(raw.strip().lower())
        if role is None:
            problems.append(f"{raw!r} is not an NLI label")
        elif role in found:
            problems.append(f"{raw!r} repeats {role}")
        else:
            found[role] = idx
    problems += [f"no {r} label" for r in (ENTAILMENT, CONTRADICTION) if r not in found]
    if problems:
        labels = {int(k): v for k, v in id2label.items()}
        raise ConfigError(f"the judge model {model!r} has labels {labels}, which an NLI judge cannot read "
                          f"({'; '.join(problems)}). Its config's id2label must name entailment and "
                          "contradiction (neutral optional), e.g. {0: 'entailment', 1: 'neutral', "
                          "2: 'contradiction'}; use an NLI checkpoint, or fix id2label in its config.json")
    return found


@dataclass(frozen=True)
class _Window:
    item: int
    index: int
    count: int
    chars: tuple[int, int]  # the paragraph's characters this window reads

    def where(self) -> str:
        return f"window {self.index + 1}/{self.count} (chars {self.chars[0]}–{self.chars[1]})"


class NLIJudge:
    """Entailment / neutral / contradiction from a sequence-classification NLI model.

    `model` replaces the loaded classifier (tests inject doubles); it must be callable like a
    transformers model and carry a `config` with `id2label`. The tokenizer always loads from
    `settings.model`, resolved offline (pipeline/models.py).
    """

    def __init__(self, settings: JudgeSettings, *, model: Any = None):
        if not settings.model:
            raise ConfigError("judge backend 'nli' needs `model` (a local path or Hugging Face id)")
        self.settings = settings
        self.name = f"nli/{settings.model}"
        self.dtype = judge_dtype(settings)  # before anything loads: a refused dtype costs nothing
        path = resolve_model(settings.model, "judge")
        self.device = torch_device(settings.device)
        try:
            self.tokenizer = AutoTokenizer.from_pretrained(path, local_files_only=True)
            if model is None:
                model = AutoModelForSequenceClassification.from_pretrained(
                    path, local_files_only=True, **{_dtype_keyword(): self.dtype})
                model.to(device=self.device, dtype=self.dtype)
                loaded = {p.dtype for p in model.parameters() if p.is_floating_point()}
                if loaded - {self.dtype}:
                    raise ConfigError(f"the judge model {settings.model!r} loaded with parameters in "
                                      f"{sorted(map(str, loaded))}, not {self.dtype}")
        except (OSError, ValueError) as e:
            raise ConfigError(f"could not load the judge model {settings.model!r} from {path}: {e}") from e
        if not self.tokenizer.is_fast:
            raise ConfigError(f"the judge model {settings.model!r} has no fast tokenizer, which windowing needs "
                              "(install `tokenizers` and `sentencepiece`, or add tokenizer.json)")
        if hasattr(model, "eval"):
            model.eval()  # no dropout: the same input always gets the same verdict
        self.model = model
        self.labels = label_indices(model.config.id2label, settings.model)
        self.max_tokens = self._token_limit()
        self._pair_specials = self.tokenizer.num_special_tokens_to_add(pair=True)
        # a claim must leave at least this much of the input to the paragraph
        self.min_window = max(8, self.max_tokens // 4)
        self._inputs = [k for k in self.tokenizer.model_input_names
                        if k in ("input_ids", "attention_mask", "token_type_ids")]
        self._lock = threading.Lock()  # one forward pass at a time (memory, CPU threads)

    def _token_limit(self) -> int:
        """Tokens per model input: the smallest of the setting, the tokenizer's and the model's limit."""
        limits = [self.settings.max_length]
        if 0 < self.tokenizer.model_max_length < _NO_LIMIT:
            limits.append(int(self.tokenizer.model_max_length))
        cfg = self.model.config
        positions = getattr(cfg, "max_position_embeddings", None)
        if isinstance(positions, int) and positions > 0:
            limits.append(positions - 2 if getattr(cfg, "model_type", "") in _OFFSET_POSITIONS else positions)
        return min(limits)

    async def judge(self, items: Sequence[JudgeInput]) -> list[Verdict]:
        if not items:
            return []
        return await asyncio.to_thread(self._judge, list(items))

    def _no_verdict(self, why: str) -> Verdict:
        return Verdict(None, None, self.name, why)

    def _windows(self, i: int, item: JudgeInput) -> tuple[list[dict], list[_Window]] | str:
        """The model inputs for every (window of the paragraph, whole claim) pair of one item,
        or why there are none."""
        claim_tokens = len(self.tokenizer(item.claim, add_special_tokens=False)["input_ids"])
        room = self.max_tokens - self._pair_specials - claim_tokens
        if room < self.min_window:
            return (f"claim too long to judge: its {claim_tokens} tokens leave {max(room, 0)} of the model's "
                    f"{self.max_tokens} for the paragraph (at least {self.min_window} needed)")
        overlap = min(self.settings.window_stride, room // 2)
        enc = self.tokenizer(item.premise, item.claim, truncation="only_first", max_length=self.max_tokens,
                             stride=overlap, return_overflowing_tokens=True, return_offsets_mapping=True)
        count = len(enc["input_ids"])
        rows, windows = [], []
        for k in range(count):
            spans = [o for o, s in zip(enc["offset_mapping"][k], enc.sequence_ids(k)) if s == 0]
            if not spans:
                return "the paragraph has no tokens the model can read"
            rows.append({key: enc[key][k] for key in self._inputs})
            windows.append(_Window(i, k, count, (spans[0][0], spans[-1][1])))
        return rows, windows

    def _judge(self, items: list[JudgeInput]) -> list[Verdict]:
        out: list[Verdict | None] = [None] * len(items)
        rows: list[dict] = []
        windows: list[_Window] = []
        for i, item in enumerate(items):
            if not item.claim.strip():
                out[i] = self._no_verdict("empty claim: nothing to judge")
                continue
            if not item.premise.strip():
                out[i] = self._no_verdict("empty paragraph: nothing to judge the claim against")
                continue
            got = self._windows(i, item)
            if isinstance(got, str):
                out[i] = self._no_verdict(got)
                continue
            rows += got[0]
            windows += got[1]
        probs = self._probabilities(rows) if rows else torch.zeros((0, len(self.model.config.id2label)))
        by_item: dict[int, list[int]] = {}
        for r, w in enumerate(windows):
            by_item.setdefault(w.item, []).append(r)
        for i, rs in by_item.items():
            out[i] = self._verdict([windows[r] for r in rs], probs[rs])
        assert all(v is not None for v in out)
        return out  # type: ignore[return-value]

    def _probabilities(self, rows: list[dict]) -> torch.Tensor:
        """Softmax over the labels for every row, `batch_size` rows per forward pass."""
        pad = self.tokenizer.pad_token_id if self.tokenizer.pad_token_id is not None else 0
        left = self.tokenizer.padding_side == "left"
        n_labels = len(self.model.config.id2label)
        parts = []
        with self._lock, torch.inference_mode():
            for start in range(0, len(rows), self.settings.batch_size):
                batch = rows[start:start + self.settings.batch_size]
                width = max(len(r["input_ids"]) for r in batch)
                tensors = {}
                for key in batch[0]:
                    fill = pad if key == "input_ids" else 0
                    padded = [[fill] * (width - len(r[key])) + r[key] if left
                              else r[key] + [fill] * (width - len(r[key])) for r in batch]
                    tensors[key] = torch.tensor(padded, dtype=torch.long, device=self.device)
                out = self.model(**tensors)
                logits = getattr(out, "logits", out)
                if tuple(logits.shape) != (len(batch), n_labels):
                    raise RuntimeError(f"judge model {self.settings.model!r} returned logits of shape "
                                       f"{tuple(logits.shape)} for {len(batch)} inputs and {n_labels} labels")
                parts.append(torch.softmax(logits.float(), dim=-1).cpu())
        probs = torch.cat(parts)
        if not bool(torch.isfinite(probs).all()):  # e.g. an fp16 overflow: an error, never a guess
            raise RuntimeError(f"judge model {self.settings.model!r} produced non-finite probabilities"
                               + (f" in {self.dtype}; try judge.dtype: float32" if self.dtype != torch.float32
                                  else ""))
        return probs

    def _verdict(self, windows: list[_Window], probs: torch.Tensor) -> Verdict:
        s = self.settings
        p_ent = probs[:, self.labels[ENTAILMENT]]
        p_con = probs[:, self.labels[CONTRADICTION]]
        best = int(torch.argmax(p_ent))  # first of equals: deterministic
        worst = int(torch.argmax(p_con))
        ent, con = float(p_ent[best]), float(p_con[worst])
        best_at = f"entailment {ent:.3f} in {windows[best].where()}"
        if con >= s.contradiction_threshold:
            label = "contradicted"
            detail = (f"contradiction {con:.3f} ≥ {s.contradiction_threshold} in {windows[worst].where()}; best "
                      f"{best_at}" + (" (the contradiction takes precedence)" if ent >= s.threshold else ""))
        else:
            label = "entailed" if ent >= s.threshold else "neutral"
            detail = (f"best {best_at} (threshold {s.threshold}); highest contradiction {con:.3f} "
                      f"in {windows[worst].where()}")
        return Verdict(label, round(ent, 6), self.name, detail)
