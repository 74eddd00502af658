"""The claim JSON read as it is written (pipeline/claims.py, `ClaimReader`): each claim handed out when its object
closes, the same claims whatever the pieces, and what stops the output after its last complete claim costs only what
follows it."""
from __future__ import annotations

import json

import pytest

from pipeline.claims import MAX_CLAIMS, ClaimReader, ParseFailure, parse_claims


def claim(text: str, quote: str | None = None, score: float | None = 0.9) -> dict:
    out = {"text": text, "citations": [{"chunk_id": "c1", "quote": quote or text}]}
    if score is not None:
        out["self_score"] = score
    return out


# quotes holding what a naive reader would take for structure: braces, brackets, escaped quotes, a backslash
TRICKY = [claim('Tarif {umum} "final" 10%.', 'adalah 10% } ] { ['), claim("Denda Rp100.000 \\ per bulan.")]
RAW = json.dumps({"claims": TRICKY, "self_assessment": 0.7}, ensure_ascii=False)


@pytest.mark.parametrize("size", [1, 2, 3, 7, 64, len(RAW)])
def test_claims_close_one_by_one_whatever_the_pieces(size):
    reader, seen = ClaimReader(), []
    for i in range(0, len(RAW), size):
        for c in reader.feed(RAW[i:i + size]):
            seen.append((c.text, i + size))  # when (how much text) it was handed out
    parsed = reader.finish()
    assert [c.model_dump(exclude_none=True) for c in parsed.claims] == TRICKY
    assert parsed.self_assessment == 0.7 and parsed.cut is None
    first_end = len('{"claims": [' + json.dumps(TRICKY[0], ensure_ascii=False))  # its object closes here
    assert seen[0][1] <= first_end + size - 1  # handed out with the piece that closed it, before the output ends
    assert size == len(RAW) or seen[0][1] < len(RAW)
    assert parse_claims(RAW) == parsed


def test_an_output_cut_off_after_complete_claims_keeps_them_and_says_where_it_stopped():
    cut = RAW[:RAW.index("Denda") + 8]  # inside the second claim
    parsed = parse_claims(cut, "length")
    assert [c.text for c in parsed.claims] == [TRICKY[0]["text"]]
    assert parsed.cut.reason == "generator_output_truncated" and parsed.self_assessment is None
    # malformed after the first claim: the same
    bad = json.dumps({"claims": [TRICKY[0]]})[:-2] + ', {"text": oops}]}'
    parsed = parse_claims(bad)
    assert len(parsed.claims) == 1 and parsed.cut.reason == "generator_output_invalid_json"
    # an off-schema claim stops the reading there: the claims after it are not read either
    off = json.dumps({"claims": [TRICKY[0], {"text": "x", "citations": []}, TRICKY[1]]})
    parsed = parse_claims(off)
    assert [c.text for c in parsed.claims] == [TRICKY[0]["text"]] and parsed.cut.reason == "generator_output_off_schema"
    # the generator failed while writing (a streamed output recorded as written)
    assert parse_claims(cut, "error").cut.reason == "generator_failed"


@pytest.mark.parametrize("raw, finish, reason", [
    ('{"claims": [{"text": "Tarif', "length", "generator_output_truncated"),
    ("Tarifnya 10%.", "stop", "generator_output_invalid_json"),
    ('{"answer": "10%"}', "stop", "generator_output_off_schema"),
    ('{"claims": [', "stop", "generator_output_invalid_json"),
    ('{"claims": []}', "length", "generator_output_truncated"),
    ('[{"text": "x"}]', "stop", "generator_output_off_schema"),
    ('{"claims": [{"text": "x", "citations": []}]}', "stop", "generator_output_off_schema"),
    ('{"claims": [{"text": "Tarif', "error", "generator_failed"),
])
def test_no_complete_claim_before_the_failure_is_a_refusal_saying_why(raw, finish, reason):
    with pytest.raises(ParseFailure) as e:
        parse_claims(raw, finish)
    assert e.value.reason == reason


def test_more_claims_than_the_schema_allows_keeps_the_allowed_ones():
    raw = json.dumps({"claims": [claim(f"Klaim {i}.") for i in range(MAX_CLAIMS + 2)]})
    parsed = parse_claims(raw)
    assert len(parsed.claims) == MAX_CLAIMS and parsed.cut.reason == "generator_output_off_schema"


def test_an_unknown_key_of_the_envelope_after_the_claims_is_a_cut_not_a_claim_lost():
    raw = json.dumps({"claims": [claim("Tarif 10%.")], "note": "x"})
    parsed = parse_claims(raw)
    assert [c.text for c in parsed.claims] == ["Tarif 10%."] and parsed.cut.reason == "generator_output_off_schema"
