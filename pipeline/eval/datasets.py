"""Evaluation datasets: SQuAD 2.0 (both shapes) and saksi's JSONL, read into one shape.

Accepted inputs:

- SQuAD 2.0 official: ``{"data": [{"title", "paragraphs": [{"context", "qas"}]}]}``
- the flat list IDK-MRC and its TyDi redistribution use: ``[{"context", "qas"}]``
- JSONL, one question per line (documented in docs/evaluation.md)::

    {"id": "q1", "question": "...", "answers": ["..."], "answerable": true,
     "context": "the passage that answers it (optional)",
     "corpus": "a file or directory to ingest, relative to the JSONL file (optional)",
     "reference": {"law": "PP 34/2021", "pasal": ["12"], "ayat": "2", "huruf": "h"}}

`reference` (optional) is the gold receipt: the law, the Pasal that count (a list: a question
about a whole BAB lists every Pasal of it), the ayat and the huruf (a digit: an *angka* item)
or null. A malformed reference skips its row, like any malformed item.

Gold answers are matched by text, never by ``answer_start`` (some datasets carry
offsets that do not match their text). A malformed item is reported and skipped; the
rest of the dataset is still evaluated.
"""
from __future__ import annotations

import json
import re
import unicodedata
from dataclasses import dataclass, field, replace
from pathlib import Path

from ..errors import SaksiError


class EvalDataError(SaksiError):
    stage = "eval"


@dataclass(frozen=True)
class Passage:
    pid: str
    text: str
    title: str | None = None


@dataclass(frozen=True)
class Reference:
    """The gold receipt of a question: where in which law its answer stands."""

    law: str                     # "PP 34/2021"
    pasal: tuple[str, ...]       # any of them counts ("12"; a BAB-level question lists the BAB's)
    ayat: str | None = None      # "2"
    huruf: str | None = None     # "h" (a huruf item) or "9" (a digit: an angka item)

    def as_dict(self) -> dict:
        return {"law": self.law, "pasal": list(self.pasal), "ayat": self.ayat, "huruf": self.huruf}


@dataclass(frozen=True)
class Question:
    qid: str
    question: str
    golds: tuple[str, ...]
    answerable: bool
    passage: str | None = None  # the pid of the passage the question was written against
    reference: Reference | None = None  # the gold receipt (JSONL `reference`)


@dataclass(frozen=True)
class EvalSet:
    name: str
    path: str
    format: str  # squad-official | squad-flat | jsonl
    passages: tuple[Passage, ...]
    questions: tuple[Question, ...]
    corpus_paths: tuple[Path, ...] = ()  # extra files/directories named by JSONL lines
    skipped: tuple[str, ...] = field(default_factory=tuple)  # "item: why", for the report


_PUNCT = re.compile(r"[^\w\s]", re.UNICODE)
_WS = re.compile(r"\s+")


def answer_key(text: str) -> str:
    """How gold answers and quotes are compared: NFKC, case-folded, punctuation as space."""
    return _WS.sub(" ", _PUNCT.sub(" ", unicodedata.normalize("NFKC", text).casefold())).strip()


def contains_answer(quote: str, golds: tuple[str, ...] | list[str]) -> bool:
    """A gold answer occurs in the quote as whole words ("5" does not match "1995")."""
    hay = f" {answer_key(quote)} "
    return any(k and f" {k} " in hay for k in (answer_key(g) for g in golds))


def _name(path: Path) -> str:
    """"idk_mrc/valid": validation files are often all called valid.json."""
    return f"{path.parent.name}/{path.stem}" if path.parent.name else path.stem


def load_dataset(path: Path, limit: int | None = None) -> EvalSet:
    """Read a dataset; `limit` keeps the first N passages with all their questions."""
    path = Path(path)
    if not path.is_file():
        raise EvalDataError(f"no dataset file at {path}")
    if limit is not None and limit < 1:
        raise EvalDataError("--limit must be at least 1")
    try:
        text = path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as e:
        raise EvalDataError(f"{path} is not UTF-8 text (byte {e.start}: {e.reason})") from None
    except OSError as e:
        raise EvalDataError(f"cannot read {path}: {e.strerror or e}") from None
    if path.suffix.lower() == ".jsonl":
        return _jsonl(path, text, limit)
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        raise EvalDataError(f"{path} is not JSON ({e}); JSONL files must end in .jsonl") from None
    if isinstance(data, dict) and isinstance(data.get("data"), list):
        groups = []
        for a, article in enumerate(data["data"]):
            paras = article.get("paragraphs") if isinstance(article, dict) else None
            if not isinstance(paras, list):
                raise EvalDataError(f"{path}: data[{a}] has no 'paragraphs' list (not SQuAD 2.0?)")
            groups.extend((p, article.get("title")) for p in paras)
        fmt = "squad-official"
    elif isinstance(data, list):
        groups = [(p, None) for p in data]
        fmt = "squad-flat"
    else:
        raise EvalDataError(f"{path}: expected SQuAD 2.0 ({{'data': [...]}}) or a list of {{context, qas}}")
    return _squad(path, fmt, groups, limit)


def _squad(path: Path, fmt: str, groups: list, limit: int | None) -> EvalSet:
    passages, questions, skipped = [], [], []
    seen: set[str] = set()
    for n, (para, title) in enumerate(groups):
        if limit is not None and len(passages) >= limit:
            break
        where = f"passage {n}"
        if not isinstance(para, dict) or not isinstance(para.get("context"), str) or not para["context"].strip():
            skipped.append(f"{where}: no 'context' text")
            continue
        qas = para.get("qas")
        if not isinstance(qas, list):
            skipped.append(f"{where}: no 'qas' list")
            continue
        pid = f"p{len(passages):05d}"
        passages.append(Passage(pid, para["context"], title if isinstance(title, str) else None))
        for k, qa in enumerate(qas):
            _keep(_question(qa, f"{where} question {k}", pid, seen), questions, skipped)
    return _evalset(path, fmt, passages, questions, (), skipped)


def _keep(q: Question | str, questions: list[Question], skipped: list[str]) -> None:
    (skipped if isinstance(q, str) else questions).append(q)


def _evalset(path: Path, fmt: str, passages, questions, corpus_paths, skipped) -> EvalSet:
    if not questions:
        raise EvalDataError(f"{path}: no usable questions" + (f" ({skipped[0]})" if skipped else ""))
    return EvalSet(_name(path), str(path), fmt, tuple(passages), tuple(questions), tuple(corpus_paths),
                   tuple(skipped))


def _question(qa: object, where: str, pid: str | None, seen: set[str]) -> Question | str:
    """A Question, or the reason the item is skipped."""
    if not isinstance(qa, dict) or not isinstance(qa.get("question"), str) or not qa["question"].strip():
        return f"{where}: no 'question' text"
    qid = str(qa.get("id") or where.replace(" ", "-"))
    if qid in seen:
        return f"{where}: duplicate id {qid!r}"
    answers = qa.get("answers") or []
    if not isinstance(answers, list):
        return f"{qid}: 'answers' is not a list"
    golds = []
    for a in answers:
        t = a.get("text") if isinstance(a, dict) else a
        if isinstance(t, str) and t.strip():
            golds.append(t.strip())
    impossible = qa.get("is_impossible")
    if impossible is None and "answerable" in qa:
        impossible = not qa["answerable"]
    if impossible is None:
        impossible = not golds  # SQuAD 1.1 style: a question with answers is answerable
    if not isinstance(impossible, bool):
        return f"{qid}: 'is_impossible'/'answerable' must be true or false"
    if not impossible and not golds:
        return f"{qid}: answerable but has no gold answer text"
    seen.add(qid)
    return Question(qid, qa["question"].strip(), tuple(dict.fromkeys(golds)) if not impossible else (),
                    not impossible, pid)


_ITEM = re.compile(r"^\(?\s*([0-9]+[A-Za-z]?|[A-Za-z]|[IVXLC]+)\s*\)?$")


def _item(value: object, what: str, letters: bool = True) -> str:
    """One Pasal/ayat/huruf value as a string ("(2)" → "2", "H" → "h"); ValueError when it is none."""
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        raise ValueError(f"{what} must be a string or a number")
    m = _ITEM.match(str(value).strip())
    if not m or (not letters and not m[1][0].isdigit()):
        raise ValueError(f"{what} {value!r} is not a {'number or letter' if letters else 'number'}")
    v = m[1]
    return v.lower() if len(v) == 1 and v.isalpha() else v


def reference_of(raw: object) -> Reference:
    """A JSONL `reference` read strictly; ValueError says what is wrong with it."""
    if not isinstance(raw, dict):
        raise ValueError("'reference' must be an object {law, pasal, ayat, huruf}")
    unknown = set(raw) - {"law", "pasal", "ayat", "huruf"}
    if unknown:
        raise ValueError(f"'reference' has unknown keys {sorted(unknown)}")
    law = raw.get("law")
    if not isinstance(law, str) or not law.strip():
        raise ValueError("'reference.law' must name the law")
    pasal = raw.get("pasal")
    if isinstance(pasal, (str, int)) and not isinstance(pasal, bool):
        pasal = [pasal]
    if not isinstance(pasal, list) or not pasal:
        raise ValueError("'reference.pasal' must be a non-empty list")
    ayat, huruf = raw.get("ayat"), raw.get("huruf")
    return Reference(" ".join(law.split()), tuple(dict.fromkeys(_item(p, "'reference.pasal'") for p in pasal)),
                     None if ayat is None else _item(ayat, "'reference.ayat'", letters=False),
                     None if huruf is None else _item(huruf, "'reference.huruf'"))


def _jsonl(path: Path, text: str, limit: int | None) -> EvalSet:
    passages: dict[str, Passage] = {}
    corpus_paths: dict[str, Path] = {}
    keys: list[str] = []  # passage keys in order of first appearance, for --limit
    questions, skipped = [], []
    seen: set[str] = set()
    for ln, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        where = f"line {ln}"
        try:
            item = json.loads(line)
        except json.JSONDecodeError as e:
            skipped.append(f"{where}: not JSON ({e.msg})")
            continue
        if not isinstance(item, dict):
            skipped.append(f"{where}: not a JSON object")
            continue
        pid = None
        key = None
        if isinstance(item.get("context"), str) and item["context"].strip():
            ctx = item["context"]
            key = "ctx:" + ctx
            if key not in passages:
                passages[key] = Passage(f"p{len(passages):05d}", ctx, item.get("title"))
            pid = passages[key].pid
        elif item.get("corpus") is not None:
            if not isinstance(item["corpus"], str):
                skipped.append(f"{where}: 'corpus' must be a path")
                continue
            target = (path.parent / item["corpus"]).resolve()
            if not target.exists():
                skipped.append(f"{where}: corpus path {item['corpus']!r} does not exist")
                continue
            key = "corpus:" + str(target)
            corpus_paths[key] = target
        if key is not None and key not in keys:
            if limit is not None and len(keys) >= limit:
                continue
            keys.append(key)
        elif key is None and limit is not None and len(keys) >= limit:
            continue
        reference = None
        if item.get("reference") is not None:
            try:
                reference = reference_of(item["reference"])
            except ValueError as e:
                skipped.append(f"{item.get('id') or where}: {e}")
                continue
        q = _question(item, where, pid, seen)
        _keep(replace(q, reference=reference) if isinstance(q, Question) and reference else q, questions, skipped)
    kept = set(keys)
    return _evalset(path, "jsonl", [p for k, p in passages.items() if k in kept], questions,
                    [p for k, p in corpus_paths.items() if k in kept], skipped)
