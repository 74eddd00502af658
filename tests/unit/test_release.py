"""What may be shown while the answer is decided (pipeline/release.py): a claim that passed its gates waits until its
attempt satisfies the route and every part does, and comes in the answer's order (history last: with real dated
documents in tests/integration/test_streaming.py)."""
from __future__ import annotations

from dataclasses import replace

from pipeline.config import Route
from pipeline.release import Release
from pipeline.types import Chunk, CitationCheck, QueryPlan, VerifiedClaim

RATE = Route(name="rate", required=("rate",))
PLAN = QueryPlan("Berapa tarif?", "berapa tarif", "id", "Berapa tarif?", ("tarif",), ())


def chunk(cid: str, categories=()) -> Chunk:
    return Chunk(cid, "doc", "Peraturan", f"Pasal {cid}", "teks", "id", "pasal", 0, 0, 4, categories=categories)


def claim(cid: str, supported: bool = True) -> VerifiedClaim:
    return VerifiedClaim(f"klaim {cid}", "supported" if supported else "unsupported",
                         (CitationCheck(cid, "teks", "Peraturan", f"Pasal {cid}", True, doc_id="doc"),),
                         reasons=() if supported else ("quote_not_found: x",))


CHUNKS = {"a": chunk("a"), "b": chunk("b", ("rate",)), "c": chunk("c", ("rate",))}


class Heard:
    def __init__(self):
        self.events = []

    def __call__(self, kind, data):
        self.events.append((kind, data))

    def released(self):
        return [d["claim"].text for k, d in self.events if k == "claim"]


def release(heard, routes=(RATE,)):
    r = Release(heard, "Berapa tarif?", list(routes), None, None)
    for i in range(len(routes)):
        r.context(i, 0, PLAN, CHUNKS, (), 3)
    return r


def gate(r, part, index, c, attempt=0):
    r.gated(part, attempt, index, c)


def test_a_claim_waits_until_its_attempt_has_the_evidence_the_route_requires():
    heard = Heard()
    r = release(heard)
    gate(r, 0, 0, claim("a"))  # supported, but no rate yet: the part could still refuse
    assert heard.released() == []
    gate(r, 0, 1, claim("b"))  # the rate: the attempt answers its part; both go, in order
    assert heard.released() == ["klaim a", "klaim b"]
    gate(r, 0, 2, claim("c", supported=False))
    assert heard.released() == ["klaim a", "klaim b"] and heard.events[-1][0] == "demoted"


def test_claims_go_in_the_answers_order_even_when_a_later_one_clears_its_gates_first():
    heard = Heard()
    r = release(heard)
    gate(r, 0, 1, claim("b"))   # the second claim's gates finished first
    assert heard.released() == []  # the first is not settled yet
    gate(r, 0, 0, claim("c"))
    assert heard.released() == ["klaim c", "klaim b"]


def test_an_attempt_that_never_commits_shows_nothing_and_its_retry_starts_afresh():
    heard = Heard()
    r = release(heard)
    gate(r, 0, 0, claim("a"))
    r.settled(0, 0, [claim("a")])
    assert heard.released() == []
    r.context(0, 1, PLAN, CHUNKS, (), 3)
    assert heard.events[-2][0] == "retry"
    gate(r, 0, 0, claim("a"), attempt=0)  # a late word of the failed attempt is ignored
    gate(r, 0, 0, claim("b"), attempt=1)
    assert heard.released() == ["klaim b"]


def test_every_part_must_commit_before_any_claim_is_shown():
    heard = Heard()
    r = release(heard, (RATE, RATE))
    gate(r, 1, 0, claim("b"))
    assert heard.released() == []  # part 0 could still refuse the whole question
    gate(r, 0, 0, claim("c"))
    assert heard.released() == ["klaim c"]  # part 1's claim waits for every claim of part 0
    r.settled(0, 0, [claim("c")])
    assert heard.released() == ["klaim c", "klaim b"]


def test_a_definition_several_documents_define_is_released_in_its_final_band_from_the_start():
    """A question asking what a term means, naming no document, whose term two documents of the attempt's candidates
    define: every claim is released already kept out of TINGGI (`several_definitions`), as the decided answer shows
    it (decision.definitions_capped); so is a claim of another document where one document defines it
    (`other_definitions`); the one defining document's own claim, or a question that names its regulation: as
    gated."""
    from pipeline.config import ConfidenceSettings
    from pipeline.types import Candidate, Confidence

    asked = "Apa yang dimaksud dengan TKA?"
    confidence = ConfidenceSettings()
    high = Confidence(1.0, 0.95, 0.95, {"judge": 0.45, "retrieval": 0.35, "generator": 0.2}, 0.97, None, 0.97, "TINGGI")
    definers = [Candidate(replace(chunk("a"), doc_id="pp-1"), defines="Pasal 1 angka 1"),
                Candidate(replace(chunk("b"), doc_id="uu-2"), defines="Pasal 1 angka 3"), Candidate(chunk("c"))]
    defining = replace(claim("a"), confidence=high)

    def shown(candidates, named=()):
        heard = Heard()
        r = Release(heard, asked, [Route(name="definition", required=())], None, confidence, named)
        r.context(0, 0, PLAN, CHUNKS, (), 3, candidates)
        gate(r, 0, 0, defining)
        (got,) = [d["claim"] for k, d in heard.events if k == "claim"]
        return got.confidence

    several = shown(definers)
    assert several.band != "TINGGI" and several.capped_by == "several_definitions"
    own = [Candidate(chunk("a"), defines="Pasal 1 angka 1"), Candidate(chunk("c"))]  # the claim's own document
    assert shown(own).band == "TINGGI"  # one document defines it: its definition is the answer
    other = shown(definers[:1] + definers[2:])  # one document defines it, the claim is another's
    assert other.band != "TINGGI" and other.capped_by == "other_definitions"
    assert shown(definers, named=(("PP 1/2031", "pp-1"),)).band == "TINGGI"  # the question names its regulation
