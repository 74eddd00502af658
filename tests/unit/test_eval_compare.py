"""`saksi eval --compare A B`: two runs' rows question by question (pipeline/eval/compare.py)."""
import json

import pytest

from pipeline.cli.main import main
from pipeline.eval.compare import RunRowsError, compare, compare_text, load_rows, mcnemar_exact, newcombe, wilson

REF = {"law": "PP 34/2021", "pasal": ["12"], "ayat": "2", "huruf": None}


def row(qid, outcome, pasal=None, band="SEDANG", confidence=0.85, ref=REF):
    """A questions.jsonl row as the runner writes it: `pasal` True/False is the top claim's Pasal hit."""
    top = None if outcome != "answer" else {"band": band, "confidence": confidence, "cites": [], "law": True,
                                            "pasal": pasal, "ayat": pasal, "huruf": None}
    return {"id": qid, "outcome": outcome, "confidence": confidence if outcome == "answer" else None,
            "receipt": {"reference": ref, "top": top, "any": {"law": True, "pasal": pasal, "ayat": pasal,
                                                              "huruf": None},
                        "laws": ["PP 34/2021"], "span_answer": False, "span_hit": False}}


def test_intervals_and_exact_test_against_published_values():
    # Newcombe (1998), Statistics in Medicine 17:857-872, tables I and II: 81/263 -> 0.2553-0.3662 (score method);
    # 56/70 vs 48/80, difference 0.2000 -> 0.0524-0.3339 (method 10)
    lo, hi = wilson(81, 263)
    assert (round(lo, 4), round(hi, 4)) == (0.2553, 0.3662)
    lo, hi = newcombe(48, 80, 56, 70)
    assert (round(lo, 4), round(hi, 4)) == (0.0524, 0.3339)
    assert wilson(0, 0) is None and newcombe(1, 2, 0, 0) is None
    assert wilson(0, 10)[0] == pytest.approx(0.0) and wilson(10, 10)[1] == pytest.approx(1.0)
    # two-sided exact McNemar: 4 worse, 2 better -> 2 * P(X <= 2 | n=6) = 2 * 22/64
    assert mcnemar_exact(4, 2) == pytest.approx(44 / 64)
    assert mcnemar_exact(0, 8) == pytest.approx(2 / 256)
    assert mcnemar_exact(0, 0) == 1.0 and mcnemar_exact(3, 3) == 1.0


A = {r["id"]: r for r in [row("q1", "answer", True), row("q2", "answer", True), row("q3", "answer", False),
                          row("q4", "refusal"), row("q5", "answer", True), row("q6", "answer", True),
                          row("q7", "answer", True)]}
B = {r["id"]: r for r in [row("q1", "answer", True), row("q2", "answer", False, "TINGGI", 0.93),
                          row("q3", "answer", True), row("q4", "answer", False, "SEDANG", 0.81),
                          row("q5", "refusal"), row("q6", "answer", False, "SEDANG", 0.8), row("q8", "answer", True)]}


def test_compare_moves_question_by_question():
    got = compare(A, B)
    assert got["questions"] == 6 and got["only_in_a"] == 1 and got["only_in_b"] == 1
    assert got["a"]["answered"] == 5 and got["a"]["hits"] == 4 and got["a"]["precision"] == 0.8
    assert got["b"]["answered"] == 5 and got["b"]["hits"] == 2 and got["b"]["precision"] == 0.4
    assert got["difference"]["b_minus_a"] == -0.4
    lo, hi = got["difference"]["interval95"]
    assert lo < -0.4 < hi
    assert got["paired"] == {"answered_by_both": 4, "right_to_wrong": 2, "wrong_to_right": 1,
                             "mcnemar_p": 1.0}
    assert [t["id"] for t in got["moves"]["right->wrong"]] == ["q2", "q6"]
    assert got["moves"]["right->wrong"][0] == {"id": "q2", "band": "TINGGI", "confidence": 0.93}
    assert [t["id"] for t in got["moves"]["refused->wrong"]] == ["q4"]
    assert [t["id"] for t in got["moves"]["right->refused"]] == ["q5"]
    assert "right->right" not in got["moves"] and got["counts"]["right->right"] == 1
    text = compare_text(got, "small", "full")
    assert "A small: answered 5 of 6, precision 80.0%" in text
    assert "right -> wrong (2): q2 (TINGGI 0.93), q6 (SEDANG 0.80)" in text
    assert "exact McNemar p = 1.0" in text


def test_compare_at_another_level_and_without_shared_questions():
    no_ayat = {**REF, "ayat": None}
    a = {"q1": row("q1", "answer", True, ref=no_ayat), "q2": row("q2", "answer", True)}
    b = {"q1": row("q1", "answer", True, ref=no_ayat), "q2": row("q2", "answer", False)}
    assert compare(a, b, "ayat")["questions"] == 1          # q1's gold has no ayat: not counted at that level
    with pytest.raises(ValueError, match="level must be one of"):
        compare(a, b, "bab")
    with pytest.raises(RunRowsError, match="share no referenced question"):
        compare(a, {"other": row("other", "answer", True)})


def _run(tmp_path, name, rows, extra=()):
    d = tmp_path / name
    d.mkdir()
    (d / "questions.jsonl").write_text("".join(json.dumps(r) + "\n" for r in [*rows, *extra]), encoding="utf-8")
    return d


def test_cli_compare(tmp_path, capsys):
    a = _run(tmp_path, "a", A.values(), extra=[{"id": "plain", "outcome": "answer"}])  # no reference: left out
    b = _run(tmp_path, "b", B.values())
    assert load_rows(a).keys() == A.keys()
    assert main(["eval", "--compare", str(a), str(b)]) == 0
    out = capsys.readouterr().out
    assert "precision 40.0%" in out and "right -> wrong (2)" in out
    assert main(["eval", "--compare", str(a), str(b), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["paired"]["right_to_wrong"] == 2
    assert main(["eval", "--compare", str(a), str(b), "--level", "law"]) == 0
    assert "law precision of the top claim" in capsys.readouterr().out


def test_cli_compare_bad_input_is_one_line(tmp_path, capsys):
    a = _run(tmp_path, "a", A.values())
    assert main(["eval", "--compare", str(a), str(tmp_path / "missing")]) == 2
    err = capsys.readouterr().err
    assert "missing: no questions.jsonl" in err and "Traceback" not in err
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "questions.jsonl").write_text('{"id": "q1"}\n{not json\n', encoding="utf-8")
    assert main(["eval", "--compare", str(a), str(broken)]) == 2
    assert "questions.jsonl:2: not JSON" in capsys.readouterr().err
    for name, data in (("binary", b"\xff\xfe\x00"), ("list", b"[1, 2]\n")):
        d = tmp_path / name
        d.mkdir()
        (d / "questions.jsonl").write_bytes(data)
        assert main(["eval", "--compare", str(a), str(d)]) == 2
        err = capsys.readouterr().err
        assert ("cannot be read" if name == "binary" else "not a row") in err and "Traceback" not in err
    shapeless = _run(tmp_path, "shapeless", [{"id": "q1", "outcome": "answer", "receipt": {}}])
    assert main(["eval", "--compare", str(a), str(shapeless)]) == 2
    err = capsys.readouterr().err
    assert "not in the shape `saksi eval` writes" in err and "Traceback" not in err
    unref = _run(tmp_path, "unref", [{"id": "q1", "outcome": "answer"}])
    assert main(["eval", "--compare", str(a), str(unref)]) == 2
    assert "no question with a gold reference" in capsys.readouterr().err
    assert main(["eval", "data.jsonl", "--compare", str(a), str(a)]) == 2
    assert "--compare reads two runs' directories" in capsys.readouterr().err
    assert main(["eval", "data.jsonl", "--level", "ayat"]) == 2
    assert "--level goes with --compare" in capsys.readouterr().err
