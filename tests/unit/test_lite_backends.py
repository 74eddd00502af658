"""The lite profile's extractive generator and verbatim judge."""
from __future__ import annotations

import asyncio
import json

import pytest

from pipeline.analysis import QueryAnalyzer, build_analyzers
from pipeline.backends.lite import ExtractiveGenerator, VerbatimJudge
from pipeline.backends.quote_checks import polarity_flip
from pipeline.claims import parse_claims
from pipeline.categories import CategoryTagger
from pipeline.types import ContextItem, GenerationRequest, JudgeInput

pytestmark = pytest.mark.unit

NEW = ("Pasal 3\n(1) Besarnya Pajak Penghasilan atas persewaan tanah adalah 10% (sepuluh persen) dari jumlah bruto.\n"
       "(2) Pajak Penghasilan atas persewaan tanah bersifat final.")
WITHHOLD = "Pasal 4\n(1) Pajak Penghasilan atas persewaan tanah dipotong oleh penyewa pada saat pembayaran."
OLD = "Pasal 2\n(1) Besarnya Pajak Penghasilan atas persewaan tanah adalah 15% (lima belas persen) dari jumlah bruto."


@pytest.fixture(scope="module")
def qa(profile):
    return QueryAnalyzer(build_analyzers(profile.analysis), profile.glossary, profile.normalisation)


def request(qa, question, required=()):
    terms = qa.term_groups(qa.normalise(question), "id")
    heading = "BAB II TARIF DAN PEMOTONGAN"
    context = (ContextItem("new", "Peraturan 2025", "Pasal 3", NEW, False, "id", 0.9, heading),
               ContextItem("old", "Peraturan 2022", "Pasal 2", OLD, False, "id", 0.8, heading),
               ContextItem("withhold", "Peraturan 2025", "Pasal 4", WITHHOLD, False, "id", 0.7, heading))
    return GenerationRequest(question=question, lang="id", context=context, terms=tuple(terms), required=required)


def generate(qa, profile, req, tagger=True):
    """Coverage alone (no reader), at the floor lite used before it had one: the candidate rules under test."""
    settings = profile.settings.generator.model_copy(update={"min_coverage": 0.75, "reader": None})
    gen = ExtractiveGenerator(settings, qa, CategoryTagger(profile.categories) if tagger else None)
    return asyncio.run(gen.generate(req))


def test_claims_are_exact_sentences_without_their_ayat_label(qa, profile):
    out = generate(qa, profile, request(qa, "Berapa tarif pajak penghasilan atas persewaan tanah?"))
    parsed = parse_claims(out.raw)
    texts = {"new": NEW, "old": OLD, "withhold": WITHHOLD}
    assert parsed.claims
    for c in parsed.claims:
        cit = c.citations[0]
        assert cit.quote in texts[cit.chunk_id] and not cit.quote.startswith(("Pasal", "(1)"))
        assert c.text == " ".join(cit.quote.split()) and 0.7 <= c.self_score <= 1


def test_every_document_is_heard_before_any_gets_a_second_claim(qa, profile):
    out = json.loads(generate(qa, profile, request(qa, "Berapa tarif pajak penghasilan atas persewaan tanah?")).raw)
    cited = [c["citations"][0]["chunk_id"] for c in out["claims"]]
    assert set(cited[:2]) == {"new", "old"}


def test_required_evidence_keeps_only_sentences_that_state_it(qa, profile):
    question = "Berapa tarif pajak penghasilan atas persewaan tanah?"
    loose = json.loads(generate(qa, profile, request(qa, question), tagger=False).raw)["claims"]
    strict = json.loads(generate(qa, profile, request(qa, question, required=("rate",))).raw)["claims"]
    assert any("dipotong oleh penyewa" in c["text"] for c in loose)  # covers the terms, states no rate
    assert strict and all("%" in c["text"] for c in strict)


def test_nothing_relevant_means_no_claims(qa, profile):
    out = json.loads(generate(qa, profile, request(qa, "Berapa harga tiket kereta ke Bandung?")).raw)
    assert out["claims"] == []


def test_verbatim_judge_entails_only_what_the_paragraph_says():
    judge = VerbatimJudge()
    yes, no = asyncio.run(judge.judge([
        JudgeInput("Besarnya Pajak Penghasilan atas persewaan tanah adalah 10% (sepuluh persen)", NEW),
        JudgeInput("Pajak Penghasilan atas persewaan tanah tidak dipotong oleh penyewa.", NEW)]))
    assert yes.label == "entailed" and yes.score == 1.0
    assert no.label is None and no.score is None  # no verdict, not "no"


def test_verbatim_judge_contradicts_a_claim_with_its_negation_flipped():
    premise = ("Pasal 3\n(1) Pemotongan wajib dilakukan oleh penyewa yang merupakan badan.\n"
               "(2) Penghasilan ini tidak dikenai pajak daerah.")
    judge = VerbatimJudge()
    added, removed, unrelated, same = asyncio.run(judge.judge([
        JudgeInput("Pemotongan tidak wajib dilakukan oleh penyewa yang merupakan badan.", premise),
        JudgeInput("Penghasilan ini dikenai pajak daerah.", premise),
        JudgeInput("Penyewa tidak perlu membayar bea meterai.", premise),
        JudgeInput("Pemotongan wajib dilakukan oleh penyewa", premise)]))
    assert added.label == "contradicted" and "wajib dilakukan" in added.detail
    assert removed.label == "contradicted"
    assert unrelated.label is None  # no rule applies: no verdict, never a yes
    assert same.label == "entailed"


@pytest.mark.parametrize("claim", ["tidak berlaku", "Bukan tidak mungkin itu terjadi pada badan"])
def test_polarity_rule_needs_the_claims_own_words(claim):
    assert polarity_flip(claim, "Ketentuan ini berlaku bagi badan. Itu mungkin terjadi.") is None


def test_a_term_only_another_sentence_of_the_passage_carries_earns_passage_credit(qa, profile):
    passage = ("Kabupaten Donggala terletak di Provinsi Sulawesi Tengah. "
               "Kabupaten ini mempunyai luas wilayah sebesar 4.275 kilometer persegi.")
    terms = qa.term_groups(qa.normalise("Berapa luas Kabupaten Donggala?"), "id")
    req = GenerationRequest("Berapa luas Kabupaten Donggala?", "id",
                            (ContextItem("d", "Ensiklopedia", "paragraf 1", passage, False, "id", 0.9),), tuple(terms),
                            required=("quantity",))  # the route for "berapa …": the sentence must state a figure
    settings = profile.settings.generator

    def claims(credit: float) -> list[str]:
        gen = ExtractiveGenerator(settings.model_copy(update={"passage_credit": credit, "min_coverage": 0.75}), qa,
                                  CategoryTagger(profile.categories))
        return [c["text"] for c in json.loads(asyncio.run(gen.generate(req)).raw)["claims"]]
    assert claims(0.0) == []  # "Kabupaten ini" does not name Donggala
    assert any("4.275" in c for c in claims(0.5))


def test_interrogatives_are_not_terms(qa):
    terms = {t.term for t in qa.term_groups(qa.normalise("Dimana lokasi Sony Entertainment Television?"), "id")}
    assert "dimana" not in terms and {"lokasi", "sony"} <= terms


PASAL2 = ("Pasal 2\nTerhadap impor produk kain tenunan dari kapas yang termasuk dalam pos tarif 5208.21.00, "
          "dikenakan Bea Masuk Tindakan Pengamanan.")
PASAL3 = ("Pasal 3\nBea Masuk Tindakan Pengamanan sebagaimana dimaksud dalam Pasal 2 dikenakan selama 3 (tiga) tahun "
          "dengan besaran tarif Bea Masuk Tindakan Pengamanan sebagaimana tercantum dalam Lampiran.")


def _duty_request(qa, question, linked=True):
    from pipeline.types import ContextLink

    at = PASAL3.index("Pasal 2", 10)
    links = (ContextLink(at, at + len("Pasal 2"), "p2"),) if linked else ()
    context = (ContextItem("p3", "PMK 98/2025", "Pasal 3", PASAL3, False, "id", 0.8, "", links),
               ContextItem("p2", "PMK 98/2025", "Pasal 2", PASAL2, False, "id", 0.4))
    return GenerationRequest(question, "id", context, tuple(qa.term_groups(qa.normalise(question), "id")),
                             required=("deadline",))


def test_a_sentence_naming_its_subject_by_reference_is_read_with_the_referenced_span(qa, profile):
    """"sebagaimana dimaksud dalam Pasal 2" brings Pasal 2's words; the claim cites both spans."""
    question = "Berapa lama bea masuk tindakan pengamanan atas impor kain tenunan dari kapas dikenakan?"
    gen = ExtractiveGenerator(profile.settings.generator.model_copy(update={"min_coverage": 0.75, "reader": None}),
                              qa, CategoryTagger(profile.categories))
    alone = asyncio.run(gen.generate(_duty_request(qa, question, linked=False)))
    linked = asyncio.run(gen.generate(_duty_request(qa, question)))
    assert json.loads(alone.raw)["claims"] == []  # on its own the sentence covers too few of the question's terms
    (claim,) = json.loads(linked.raw)["claims"]
    assert [c["chunk_id"] for c in claim["citations"]] == ["p3", "p2"]
    assert "selama 3 (tiga) tahun" in claim["citations"][0]["quote"]
    assert "kain tenunan dari kapas" in claim["citations"][1]["quote"] and claim["citations"][1]["quote"] in PASAL2
    (top, *_) = linked.scores
    assert top.claimed and top.referenced == ("p2",) and top.coverage >= 0.75


def test_a_rate_question_is_not_answered_by_a_duration(qa, profile):
    question = "Berapa tarif bea masuk tindakan pengamanan atas impor kain tenunan dari kapas pada tahun pertama?"
    req = _duty_request(qa, question)
    req = GenerationRequest(req.question, "id", req.context, req.terms, required=("rate",))
    gen = ExtractiveGenerator(profile.settings.generator.model_copy(update={"min_coverage": 0.3, "reader": None}),
                              qa, CategoryTagger(profile.categories))
    assert json.loads(asyncio.run(gen.generate(req)).raw)["claims"] == []


def test_the_lite_generator_claims_by_the_reader_s_probability_and_records_every_candidate(qa, profile):
    from pipeline.backends import make_generator

    gen = make_generator(profile, qa)
    assert gen.reader is not None and gen.name.startswith("extractive+reader-")
    out = asyncio.run(gen.generate(request(qa, "Berapa tarif pajak penghasilan atas persewaan tanah?", ("rate",))))
    claims = json.loads(out.raw)["claims"]
    assert out.scores and all(s.probability is not None and 0 <= s.probability <= 1 for s in out.scores)
    probs = [s.probability for s in out.scores]
    assert probs == sorted(probs, reverse=True)  # best first
    threshold = profile.settings.generator.threshold_for(regulation=False)  # this request's chunks have no spans
    claimed = {(s.chunk_id, s.quote): s.probability for s in out.scores if s.claimed}
    assert len(claimed) == len(claims)
    for c in claims:  # each claim's generator score is its sentence's probability, and it cleared the threshold
        first = c["citations"][0]
        assert c["self_score"] == claimed[(first["chunk_id"], first["quote"])] >= threshold
    assert all(s.probability < threshold for s in out.scores if not s.claimed and s.chunk_id not in
               {c["citations"][0]["chunk_id"] for c in claims})


def test_below_the_threshold_nothing_is_claimed(qa, profile):
    from pipeline.backends import make_generator

    gen = make_generator(profile, qa)
    settings = gen.settings.model_copy(update={"answer_threshold": 1.0})
    strict = ExtractiveGenerator(settings, qa, CategoryTagger(profile.categories), gen.reader)
    out = asyncio.run(strict.generate(request(qa, "Berapa tarif pajak penghasilan atas persewaan tanah?")))
    assert json.loads(out.raw)["claims"] == [] and out.scores and not any(s.claimed for s in out.scores)


class _FakeReader:
    """A test double for the trained reader: P(answers) = the candidate's passage's given value (by item rank),
    so a test chooses which passage the reader prefers."""

    name = "reader-fake"

    def __init__(self, by_item: dict[int, float]):
        self.by_item = by_item

    def probability(self, x, groups=None, docs=None, english=None):
        import numpy as np

        from pipeline.answer_reader import FEATURES
        return np.array([self.by_item[int(i)] for i in x[:, FEATURES.index("item_rank")]])


def _regulations(qa):
    """Two regulations' rate ayat, each chunk with its ayat spans (so both are the regulation domain)."""
    from pipeline.types import Span

    req = request(qa, "Berapa tarif pajak penghasilan atas persewaan tanah?")
    spans = lambda text: (Span("ayat (1)", text.index("(1)"), len(text)),)  # noqa: E731
    context = tuple(ContextItem(c.chunk_id, c.document, c.location, c.text, False, "id", c.retrieval_score, c.heading,
                                spans=spans(c.text)) for c in req.context[:2])
    return GenerationRequest(question=req.question, lang="id", context=context, terms=req.terms)


@pytest.mark.parametrize("by_item, claimed", [
    ({0: 0.6, 1: 0.7}, []),                # the reader prefers the second passage: no agreement, nobody reaches 0.8
    ({0: 0.6, 1: 0.3}, ["new"]),           # it prefers the retrieval's first: agreement lifts it past 0.8
    ({0: 0.02, 1: 0.01}, []),              # agreement, but the reader barely reads it as an answer
    ({0: 0.75, 1: 0.7}, ["new", "old"]),   # agreement answers; the other regulation, at its threshold, is heard
])
def test_agreement_answers_regulations_when_reader_and_retrieval_choose_the_same_passage(qa, profile, by_item,
                                                                                          claimed):
    from pipeline.config import AgreementCalibration

    # the lite operating point (configs/lite.yaml; docs/evaluation.md): agreement on, regulations answer from 0.8
    settings = profile.settings.generator.model_copy(update={
        "min_coverage": 0.3, "answer_at": 0.8,
        "agreement": AgreementCalibration(logit=0.647, agree=2.036, intercept=-0.264)})
    gen = ExtractiveGenerator(settings, qa, None, _FakeReader(by_item))
    out = asyncio.run(gen.generate(_regulations(qa)))
    got = [c["citations"][0]["chunk_id"] for c in json.loads(out.raw)["claims"]]
    assert got == claimed
    for s in out.scores:  # the reader's own reading is kept beside the re-read one
        assert s.read == by_item[0 if s.chunk_id == "new" else 1]


@pytest.mark.parametrize("first_in_both, uploaded, claimed", [
    ((False, False), None, []),        # agreement alone: the reader's 0.3 is not enough
    ((True, False), None, ["new"]),    # the dense and the lexical search both ranked it first: consensus answers
    ((False, True), None, []),         # both searches ranked the other passage first, which the reader does not prefer
    ((True, False), "new", []),        # the consensus is an upload's: the operator's record is judged without it
])
def test_consensus_of_both_searches_answers_an_agreeing_regulation(qa, profile, first_in_both, uploaded, claimed):
    """generator.agreement.consensus: the reader's best lies in the retrieval's first passage, which the dense and the
    lexical search each ranked first (ContextItem.first_in_both, set by the orchestrator from the candidates' ranks)."""
    import dataclasses

    from pipeline.config import AgreementCalibration

    settings = profile.settings.generator.model_copy(update={
        "min_coverage": 0.3, "answer_at": 0.8,
        "agreement": AgreementCalibration(logit=0.662, agree=1.558, consensus=1.704, intercept=-0.257)})
    gen = ExtractiveGenerator(settings, qa, None, _FakeReader({0: 0.3, 1: 0.1}))
    req = _regulations(qa)
    context = tuple(dataclasses.replace(c, first_in_both=b,
                                        uploaded_by="key:someone" if c.chunk_id == uploaded else None)
                    for c, b in zip(req.context, first_in_both))
    out = asyncio.run(gen.generate(dataclasses.replace(req, context=context)))
    assert [c["citations"][0]["chunk_id"] for c in json.loads(out.raw)["claims"]] == claimed


def test_on_a_retry_what_agreement_lifts_stays_under_the_top_band(qa, profile):
    """generator.agreement.retry_ceiling: the calibration is fitted on first attempts; the second attempt's agreement
    still answers (at answer_at) but reads at most the ceiling, so it is never TINGGI. The reader's own reading, and
    a first attempt, are not touched."""
    import dataclasses

    from pipeline.config import AgreementCalibration

    def read(by_item, retry, ceiling=0.89):
        settings = profile.settings.generator.model_copy(update={
            "min_coverage": 0.3, "answer_at": 0.8,
            "agreement": AgreementCalibration(logit=0.662, agree=1.558, consensus=1.704, intercept=-0.257,
                                              retry_ceiling=ceiling)})
        req = _regulations(qa)
        context = tuple(dataclasses.replace(c, first_in_both=b) for c, b in zip(req.context, (True, False)))
        out = asyncio.run(ExtractiveGenerator(settings, qa, None, _FakeReader(by_item)).generate(
            dataclasses.replace(req, context=context, retry=retry)))
        claims = [c["citations"][0]["chunk_id"] for c in json.loads(out.raw)["claims"]]
        return claims, max(s.probability for s in out.scores if s.chunk_id == "new")

    claims, first = read({0: 0.3, 1: 0.1}, retry=False)
    assert claims == ["new"] and first > 0.9                  # agreement and consensus: TINGGI on a first attempt
    claims, again = read({0: 0.3, 1: 0.1}, retry=True)
    assert claims == ["new"] and again == pytest.approx(0.89)  # still answered on the retry, under the top band
    assert read({0: 0.3, 1: 0.1}, retry=True, ceiling=None)[1] == pytest.approx(first)
    assert read({0: 0.95, 1: 0.1}, retry=True)[1] == pytest.approx(0.95)  # the reader's own reading is its own


@pytest.mark.parametrize("question, claimed", [
    # the entry defines a word of the question, which asks how: agreement and consensus do not lift it, so the
    # reader's 0.3 stays under answer_at
    ("Bagaimana pejabat pembina kepegawaian menetapkan pengangkatan pegawai?", []),
    # the same entry for a question that asks its meaning: agreeing and both searches' first, it answers
    ("Apa yang dimaksud dengan Pejabat Pembina Kepegawaian?", ["pasal-1"]),
])
def test_a_definitions_entry_is_lifted_by_agreement_only_for_a_question_that_asks_a_meaning(qa, profile, question,
                                                                                             claimed):
    from pipeline.types import Span

    entry = ("Pasal 1\nDalam Peraturan Pemerintah ini yang dimaksud dengan:\n5. Pejabat Pembina Kepegawaian adalah "
             "pejabat yang mempunyai kewenangan menetapkan pengangkatan, pemindahan, dan pemberhentian pegawai.")
    other = ("Pasal 17\n(1) Presiden menetapkan penjatuhan Hukuman Disiplin bagi pejabat pembina kepegawaian yang "
             "melakukan pengangkatan pegawai tanpa kewenangan.")
    context = (ContextItem("pasal-1", "PP 94/2021", "Pasal 1 angka 5", entry, False, "id", 0.9, first_in_both=True,
                           spans=(Span("Pasal 1 angka 5", entry.index("5."), len(entry)),)),
               ContextItem("pasal-17", "PP 94/2021", "Pasal 17 ayat (1)", other, False, "id", 0.8,
                           spans=(Span("ayat (1)", other.index("(1)"), len(other)),)))
    req = GenerationRequest(question=question, lang="id", context=context,
                            terms=tuple(qa.term_groups(qa.normalise(question), "id")))
    # the profile's own agreement calibration (configs/lite.yaml)
    settings = profile.settings.generator.model_copy(update={"min_coverage": 0.3, "answer_at": 0.8, "chapter": None})
    assert settings.agreement is not None
    out = asyncio.run(ExtractiveGenerator(settings, qa, None, _FakeReader({0: 0.3, 1: 0.1})).generate(req))
    assert [c["citations"][0]["chunk_id"] for c in json.loads(out.raw)["claims"]] == claimed
    entry = [s for s in out.scores if s.chunk_id == "pasal-1"]  # the entry alone, after its lead-in, the whole list
    assert len(entry) == 3 and all(s.read == 0.3 for s in entry)
    assert (max(s.probability for s in entry) > 0.8) is bool(claimed)


class _FakeEmbedder:
    """A test double for the embedder: unit vectors in 2-d, the query's along the first axis and a passage's at
    the cosine the test gives (`cosine`, or by a word the passage holds: `by_word`), so a test chooses the cosine
    of question and quote; it records what it was asked to embed."""

    name = "embedder-fake"

    def __init__(self, cosine: float, by_word: dict[str, float] | None = None):
        self.cosine, self.by_word, self.asked = cosine, by_word or {}, []

    async def embed_queries(self, texts):
        import numpy as np
        self.asked += [("query", t) for t in texts]
        return np.array([[1.0, 0.0]] * len(texts))

    async def embed_passages(self, texts):
        import numpy as np
        self.asked += [("passage", t) for t in texts]
        cos = [next((c for w, c in self.by_word.items() if w in t), self.cosine) for t in texts]
        return np.array([[c, np.sqrt(1 - c * c)] for c in cos])


def _cross_lingual_settings(profile, **update):
    from pipeline.config import AgreementCalibration, CrossLingualCalibration

    return profile.settings.generator.model_copy(update={
        "min_coverage": 0.3, "answer_at": 0.8,
        "agreement": AgreementCalibration(logit=0.658, agree=1.348, consensus=1.669, intercept=-0.117),
        "cross_lingual": CrossLingualCalibration(embedder="embedder-fake", candidates=4, similarity=60.0, center=0.85,
                                                 lead=40.0, agree=0.5, intercept=-1.0), **update})


def test_an_english_question_is_read_by_the_embedder_as_well(qa, profile):
    """generator.cross_lingual: an English question of Indonesian regulations; the reader prefers the retrieval's
    first passage but barely (0.3), the embedder puts the other regulation's ayat well ahead (0.95 against 0.80):
    that one is re-read past answer_at and answered. Asked in Indonesian, the same context is not embedded."""
    import dataclasses

    import numpy as np

    req = _regulations(qa)
    english = dataclasses.replace(req, question="What is the income tax rate on land rental?", lang="en")
    embedder = _FakeEmbedder(0.5, {"15%": 0.95, "10%": 0.80})
    gen = ExtractiveGenerator(_cross_lingual_settings(profile), qa, None, _FakeReader({0: 0.3, 1: 0.1}), embedder)
    out = asyncio.run(gen.generate(english))
    # it answers first; the retrieval's first, agreement-read at the regulation threshold, is heard beside it
    assert [c["citations"][0]["chunk_id"] for c in json.loads(out.raw)["claims"]][:1] == ["old"]
    before = ExtractiveGenerator(_cross_lingual_settings(profile, cross_lingual=None), qa, None,
                                 _FakeReader({0: 0.3, 1: 0.1}), embedder)
    assert "old" not in [c["citations"][0]["chunk_id"] for c in json.loads(asyncio.run(before.generate(english)).raw)
                         ["claims"]]
    read = {s.chunk_id: s for s in out.scores}
    assert np.isclose(read["old"].similarity, 0.95) and np.isclose(read["new"].similarity, 0.80)
    assert read["old"].read == 0.1  # the reader's own reading is kept beside it
    asked = len(embedder.asked)
    again = asyncio.run(gen.generate(english))  # asked again (a corrective retry): the vectors are kept
    assert len(embedder.asked) == asked and again.scores == out.scores
    embedder.asked.clear()
    out = asyncio.run(gen.generate(req))  # the same context asked in Indonesian: the reader alone
    assert embedder.asked == [] and all(s.similarity is None for s in out.scores)


def test_an_english_question_that_asks_no_meaning_is_not_answered_by_a_definitions_entry(qa, profile):
    """The cross-lingual reading of an English question that asks no meaning: a definitions entry the embedder reads
    closest is embedded (the others' rival, so the lead of the rest is measured against it) but not lifted; asked
    for its meaning, the same entry is lifted and answers."""
    from pipeline.types import Span

    entry = ("Pasal 1\nDalam Peraturan Pemerintah ini yang dimaksud dengan:\n5. Pejabat Pembina Kepegawaian adalah "
             "pejabat yang mempunyai kewenangan menetapkan pengangkatan, pemindahan, dan pemberhentian pegawai.")
    other = ("Pasal 17\n(1) Presiden menetapkan penjatuhan Hukuman Disiplin bagi pejabat pembina kepegawaian yang "
             "melakukan pengangkatan pegawai tanpa kewenangan.")
    context = (ContextItem("pasal-1", "PP 94/2021", "Pasal 1 angka 5", entry, False, "id", 0.9,
                           spans=(Span("Pasal 1 angka 5", entry.index("5."), len(entry)),)),
               ContextItem("pasal-17", "PP 94/2021", "Pasal 17 ayat (1)", other, False, "id", 0.8,
                           spans=(Span("ayat (1)", other.index("(1)"), len(other)),)))
    embedder = _FakeEmbedder(0.5, {"adalah": 0.97, "Presiden": 0.80})
    settings = _cross_lingual_settings(profile, agreement=None)
    for question, claimed in (("How does the staffing supervisor appoint civil servants?", []),
                              ("What is meant by the civil service staffing supervisor?", ["pasal-1"])):
        req = GenerationRequest(question=question, lang="en", context=context,
                                terms=tuple(qa.term_groups(qa.normalise(question), "en")))
        out = asyncio.run(ExtractiveGenerator(settings, qa, None, _FakeReader({0: 0.2, 1: 0.1}),
                                              embedder).generate(req))
        assert [c["citations"][0]["chunk_id"] for c in json.loads(out.raw)["claims"]][:1] == claimed, question
        read = [s for s in out.scores if s.chunk_id == "pasal-1"]
        assert read and all(s.similarity is not None for s in read)  # embedded either way
        assert (max(s.probability for s in read) > 0.8) is bool(claimed)


def test_an_upload_is_not_read_by_the_embedder_for_an_english_question(qa, profile):
    """The cross-lingual reading is the operator's records' only: an upload the embedder would rank first keeps the
    reader's reading and is not answered; the operator's record is read without it."""
    import dataclasses

    req = _regulations(qa)
    context = tuple(dataclasses.replace(c, uploaded_by="key:someone" if c.chunk_id == "old" else None)
                    for c in req.context)
    english = dataclasses.replace(req, question="What is the income tax rate on land rental?", lang="en",
                                  context=context)
    embedder = _FakeEmbedder(0.5, {"15%": 0.99, "10%": 0.70})
    gen = ExtractiveGenerator(_cross_lingual_settings(profile), qa, None, _FakeReader({0: 0.3, 1: 0.1}), embedder)
    out = asyncio.run(gen.generate(english))
    assert "old" not in [c["citations"][0]["chunk_id"] for c in json.loads(out.raw)["claims"]]
    assert all("15%" not in t for kind, t in embedder.asked if kind == "passage")
    assert all(s.similarity is None for s in out.scores if s.chunk_id == "old")


def test_cross_lingual_re_reads_only_embedded_candidates_by_their_lead():
    """reader/model.cross_lingual: a candidate's lead is over the best embedded candidate of *another* passage; a
    candidate not embedded keeps its probability; nobody is read lower than the reader read it."""
    import numpy as np

    from pipeline.answer_reader.model import cross_lingual

    p = np.array([0.3, 0.25, 0.1, 0.05])
    cos = np.array([0.80, 0.79, 0.95, np.nan])
    items = np.array([0, 0, 1, 2])
    first = np.array([True, True, False, False])
    kw = dict(similarity=60.0, center=0.85, lead=40.0, agree=0.5, intercept=-1.0)
    out = cross_lingual(p, cos, items, first, **kw)
    z = 60.0 * (0.95 - 0.85) + 40.0 * (0.95 - 0.80) - 1.0
    assert np.isclose(out[2], 1 / (1 + np.exp(-z))) and out[2] > 0.99
    assert out[3] == p[3]  # not embedded
    assert (out >= p).all() and np.allclose(out[:2], p[:2], atol=0.01)  # far behind: the reader's reading stands
    alone = cross_lingual(p, np.array([0.9, np.nan, np.nan, np.nan]), items, first, **kw)  # no rival passage: lead 0
    assert np.isclose(alone[0], 1 / (1 + np.exp(-(60.0 * 0.05 + 0.5 - 1.0))))


def test_a_candidate_the_embedder_did_not_read_closest_stays_under_the_ceiling():
    """With a ceiling, the reader's confident pick that the embedder put behind another candidate reads at most the
    ceiling (the two readings disagree: it may still be shown, never in the top band); the embedder's closest and a
    candidate not embedded are not capped. A ceiling at or above the top band is refused by the profile."""
    import numpy as np

    from pipeline.config import Settings
    from pipeline.answer_reader.model import cross_lingual

    p = np.array([0.95, 0.2, 0.97])
    cos = np.array([0.82, 0.90, np.nan])
    items = np.array([0, 1, 2])
    first = np.array([True, False, False])
    kw = dict(similarity=30.0, center=0.85, lead=20.0, agree=2.0, intercept=-1.5)
    out = cross_lingual(p, cos, items, first, **kw, ceiling=0.89)
    assert out[0] == 0.89                                  # the reader's 0.95, disputed by the embedder
    assert out[1] == cross_lingual(p, cos, items, first, **kw)[1] and out[1] > p[1]  # the closest: not capped
    assert out[2] == 0.97                                  # not embedded: the reader's reading stands
    assert cross_lingual(p, cos, items, first, **kw)[0] == 0.95  # no ceiling: as before
    bad = {"profile": "x", "confidence": {"high_regulation": 0.9},
           "generator": {"reader": "reader-lite.json", "cross_lingual": {"embedder": "e", "similarity": 1.0,
                                                                         "intercept": 0.0, "ceiling": 0.9}}}
    with pytest.raises(ValueError, match="under the regulation top band"):
        Settings.model_validate(bad)


@pytest.mark.parametrize("key", ["cross_lingual", "prose_reading"])
def test_an_embedder_reading_fitted_with_another_embedder_is_refused(profile, key):
    """The embedder's readings' weights mean something only for the embedder they were fitted with: a profile
    that embeds with another is refused when the generator is built."""
    from pipeline.analysis import query_analyzer
    from pipeline.backends import make_generator
    from pipeline.config import CrossLingualCalibration, ProseReading
    from pipeline.errors import ConfigError

    reading = (CrossLingualCalibration(embedder="bge-m3/elsewhere", similarity=30.0, intercept=-1.5)
               if key == "cross_lingual" else ProseReading(embedder="bge-m3/elsewhere", logit=1.0, similarity=9.0,
                                                           intercept=-8.0))
    settings = profile.settings.model_copy(update={"generator": profile.settings.generator.model_copy(
        update={key: reading})})
    other = profile.model_copy(update={"settings": settings})
    with pytest.raises(ConfigError, match="fitted with 'bge-m3/elsewhere'"):
        make_generator(other, query_analyzer(other))


def test_prose_reading_re_reads_the_embedded_and_caps_the_rest():
    """reader/model.prose_reading: an embedded candidate reads the fitted logistic of the reader's log-odds, its cosine,
    its lead over the best embedded candidate of another passage, whether it is the closest and whether it lies in
    the retrieval's first passage; one not embedded reads at most the lowest embedded reading; none embedded: the
    reader's readings stand."""
    import numpy as np

    from pipeline.answer_reader.model import prose_reading

    p = np.array([0.45, 0.30, 0.60, 0.90])
    cos = np.array([0.95, 0.60, 0.50, np.nan])
    items = np.array([0, 1, 0, 2])
    first = np.array([True, False, True, False])
    w = dict(logit=1.0, similarity=10.0, lead=5.0, closest=1.0, first=0.5, intercept=-8.0)
    out = prose_reading(p, cos, items, first, **w)

    def sig(z):
        return 1 / (1 + np.exp(-z))
    lo = np.log(p / (1 - p))
    assert np.isclose(out[0], sig(lo[0] + 9.5 + 5.0 * (0.95 - 0.60) + 1.0 + 0.5 - 8.0)) and out[0] > 0.95
    assert np.isclose(out[1], sig(lo[1] + 6.0 + 5.0 * (0.60 - 0.95) - 8.0))        # lead over item 0's best
    assert np.isclose(out[2], sig(lo[2] + 5.0 + 5.0 * (0.50 - 0.60) + 0.5 - 8.0)) and out[2] < p[2]  # read lower
    assert out[3] == min(out[:3]) < p[3]                      # not embedded: never above the embedded ones
    assert (prose_reading(p, np.full(4, np.nan), items, first, **w) == p).all()


def _prose(qa, question, uploaded=None):
    """Two encyclopedia passages (no Pasal: the prose domain); `uploaded`: the chunk id an API key uploaded."""
    a = ("Majapahit adalah kerajaan besar yang berpusat di Jawa Timur pada abad keempat belas. "
         "Kerajaan Majapahit didirikan oleh Raden Wijaya pada tahun 1293 setelah mengusir tentara Mongol.")
    b = "Kerajaan Majapahit mencapai puncak kejayaan pada masa pemerintahan Hayam Wuruk dan patihnya Gajah Mada."
    context = tuple(ContextItem(cid, "Ensiklopedia", f"alinea {n}", text, False, "id", 0.9 - 0.1 * n,
                                uploaded_by="key:someone" if cid == uploaded else None)
                    for n, (cid, text) in enumerate((("a", a), ("b", b)), 1))
    return GenerationRequest(question=question, lang="id", context=context,
                             terms=tuple(qa.term_groups(qa.normalise(question), "id")))


def _prose_settings(profile, **update):
    from pipeline.config import ProseReading

    return profile.settings.generator.model_copy(update={
        "min_coverage": 0.3, "agreement": None, "cross_lingual": None,
        "prose_reading": ProseReading(embedder="embedder-fake", candidates=3, logit=1.0, similarity=10.0, lead=5.0,
                                      closest=1.0, first=0.0, intercept=-8.0), **update})


def test_the_prose_reading_answers_the_sentence_the_embedder_reads_closest(qa, profile):
    """generator.prose_reading: the reader reads both passages under the prose threshold (0.45, 0.40); the embedder
    puts the founding sentence well ahead of the rest, and it is re-read past the threshold and answered, with the
    reader's own reading and the cosine in its score. Where the embedder reads nothing closer than the rest, the
    reader's 0.6 is read down and the question is refused; without the reading, 0.6 would answer."""
    question = "Siapa yang mendirikan kerajaan Majapahit?"
    req = _prose(qa, question)
    embedder = _FakeEmbedder(0.5, {"Raden Wijaya": 0.95})
    out = asyncio.run(ExtractiveGenerator(_prose_settings(profile), qa, None, _FakeReader({0: 0.45, 1: 0.40}),
                                          embedder).generate(req))
    claims = json.loads(out.raw)["claims"]
    assert [c["citations"][0]["quote"] for c in claims][:1] == [
        "Kerajaan Majapahit didirikan oleh Raden Wijaya pada tahun 1293 setelah mengusir tentara Mongol."]
    best = out.scores[0]
    assert best.read == 0.45 and best.similarity == pytest.approx(0.95) and best.probability > 0.9
    assert sum(1 for kind, _ in embedder.asked if kind == "passage") <= 3       # the reader's best three only
    flat = _FakeEmbedder(0.5)
    refused = asyncio.run(ExtractiveGenerator(_prose_settings(profile), qa, None, _FakeReader({0: 0.6, 1: 0.3}),
                                              flat).generate(req))
    assert not json.loads(refused.raw)["claims"]
    assert all(s.probability < 0.5 for s in refused.scores)
    alone = asyncio.run(ExtractiveGenerator(_prose_settings(profile, prose_reading=None), qa, None,
                                            _FakeReader({0: 0.6, 1: 0.3})).generate(req))
    assert json.loads(alone.raw)["claims"]


def test_an_upload_is_not_read_by_the_embedder_and_not_above_the_read(qa, profile):
    """The prose reading embeds the operator's records only: an upload the reader reads at 0.9 is not embedded and
    reads at most the lowest reading of those that were, so it is not answered above them."""
    req = _prose(qa, "Siapa yang mendirikan kerajaan Majapahit?", uploaded="b")
    embedder = _FakeEmbedder(0.5, {"Raden Wijaya": 0.95})
    out = asyncio.run(ExtractiveGenerator(_prose_settings(profile), qa, None, _FakeReader({0: 0.45, 1: 0.9}),
                                          embedder).generate(req))
    assert all("Hayam Wuruk" not in t for kind, t in embedder.asked if kind == "passage")
    upload = [s for s in out.scores if s.chunk_id == "b"]
    assert upload and all(s.similarity is None and s.probability <= min(
        x.probability for x in out.scores if x.similarity is not None) for s in upload)
    assert [c["citations"][0]["chunk_id"] for c in json.loads(out.raw)["claims"]][:1] == ["a"]


@pytest.mark.parametrize("location, provision", [
    ("Pasal 9", True), ("Pasal 12 ayat (1)–(3)", True), ("Pasal 18 (bagian 2/2)", True), ("Article 4", True),
    ("Pasal I angka 1 › Pasal 5", True), ("Lampiran alinea 12", False), ("penutup", False), ("", False),
    ("Bagian 2", False), ("Pasalnya", False),
])
def test_a_provision_is_a_pasal_with_or_without_its_ayat(location, provision):
    from pipeline.types import Span, is_provision

    assert is_provision(location) is provision
    assert is_provision(location, (Span("huruf a", 0, 5),))  # known ayat/huruf/angka: always a regulation's


def test_a_pasal_of_one_paragraph_is_answered_as_a_regulation(qa, profile):
    """A Pasal without ayat ("Pasal 9 Pemberi kerja orang perseorangan dilarang …") has no spans but is a
    regulation's provision: read with agreement and answered only at answer_at, like a Pasal with ayat; the
    same text as an annex paragraph is prose, answered at its threshold without agreement."""
    import dataclasses

    from pipeline.config import AgreementCalibration

    settings = profile.settings.generator.model_copy(update={
        "min_coverage": 0.3, "answer_at": 0.8,
        "agreement": AgreementCalibration(logit=0.662, agree=1.558, consensus=1.704, intercept=-0.257)})
    req = _regulations(qa)

    def claimed(location, read):
        context = tuple(dataclasses.replace(c, spans=(), location=location if i == 0 else c.location,
                                            first_in_both=i == 0) for i, c in enumerate(req.context))
        gen = ExtractiveGenerator(settings, qa, None, _FakeReader({0: read, 1: 0.1}))
        out = asyncio.run(gen.generate(dataclasses.replace(req, context=context)))
        return [c["citations"][0]["chunk_id"] for c in json.loads(out.raw)["claims"]]

    assert claimed("Pasal 3", 0.3) == ["new"]           # a regulation's: consensus lifts 0.3 past answer_at
    assert claimed("Lampiran alinea 3", 0.3) == []      # prose: 0.3 is under its threshold, no agreement
    assert claimed("Lampiran alinea 3", 0.6) == ["new"]  # prose answers at its own threshold
    assert claimed("Pasal 3", 0.6) == ["new"]


def test_an_upload_retrieved_above_the_operators_record_does_not_change_its_reading(qa, profile):
    """The operator's records are read among themselves (ExtractiveGenerator._trusted): a look-alike upload
    ranked first neither crowds nor outranks them, nor takes the agreement from them (the lite profile reads
    regulations with agreement)."""
    import dataclasses

    from pipeline.backends import make_generator

    reader = make_generator(profile, qa).reader
    settings = profile.settings.generator.model_copy(update={"min_coverage": 0.3})
    gen = ExtractiveGenerator(settings, qa, None, reader)
    req = _regulations(qa)
    own = dataclasses.replace(req.context[1], uploaded_by="local")
    look_alike = dataclasses.replace(req.context[0], uploaded_by="key:someone")

    def readings(*context):
        out = asyncio.run(gen.generate(dataclasses.replace(req, context=context)))
        return {(s.chunk_id, s.quote): s.probability for s in out.scores}

    alone = readings(own)
    crowded = readings(look_alike, own)
    assert alone and all(crowded[k] == p for k, p in alone.items())
    assert any(k[0] == look_alike.chunk_id for k in crowded)  # the upload is read too, among everything
    # the same record, were the upload the operator's own, is read against it: the rule above is what holds it
    as_own = readings(dataclasses.replace(look_alike, uploaded_by="local"), own)
    assert any(as_own[k] != p for k, p in alone.items())
    assert ExtractiveGenerator._trusted((look_alike, own)) == [1]
    assert ExtractiveGenerator._trusted((look_alike,)) == [0]  # only uploads: each read among all


@pytest.mark.parametrize("question, text, phrase", [
    ("Bagaimana mekanisme iuran JKK bagi peserta penerima upah?",
     "(1) Iuran JKK bagi Peserta bukan penerima Upah didasarkan pada nilai nominal", "penerima upah"),
    ("Apa kewajiban pemberi kerja penyelenggara negara?",
     "Pemberi Kerja selain penyelenggara negara wajib mendaftarkan Pekerjanya", "penyelenggara negara"),
    ("Bagaimana mekanisme iuran JKK bagi peserta penerima upah?",
     "Iuran JKK bagi Peserta penerima Upah dibayar oleh Pemberi Kerja", None),       # stated plainly
    ("Siapa peserta penerima upah?", "Peserta terdiri atas: a. penerima Upah; b. bukan penerima Upah", None),
    ("Berapa iuran peserta bukan penerima upah?", "Iuran Peserta bukan penerima Upah sebesar", None),  # asked so
    # the complement asked, the phrase itself stated: the text is about the others again
    ("Bagaimana mekanisme iuran JKK dan JKM bagi peserta bukan penerima upah?",
     "(1) Iuran JKM bagi Peserta penerima Upah sebagaimana dimaksud dalam Pasal 5 ayat (2), sebesar 0,30%",
     "bukan penerima upah"),
    ("Siapa peserta bukan penerima upah?", "Peserta terdiri atas: a. penerima Upah; b. bukan penerima Upah", None),
    ("Apakah PNS wajib melapor?", "PNS tidak wajib melapor", None),  # a negated verb is an answer, not a complement
])
def test_a_phrase_stated_only_as_its_complement(question, text, phrase):
    from pipeline.backends.quote_checks import excluded_phrase

    assert excluded_phrase(question, text) == phrase


def _claimed(qa, settings, question, context, by_item):
    """The chunks the lite generator claims from `context`, with the reader reading each passage `by_item`, and the
    scores it recorded."""
    req = GenerationRequest(question=question, lang="id", context=context,
                            terms=tuple(qa.term_groups(qa.normalise(question), "id")))
    out = asyncio.run(ExtractiveGenerator(settings, qa, None, _FakeReader(by_item)).generate(req))
    return [c["citations"][0]["chunk_id"] for c in json.loads(out.raw)["claims"]], out.scores


def test_a_regulation_unit_about_the_complement_of_what_was_asked_is_not_claimed(qa, profile):
    from pipeline.types import Span

    others = "Pasal 20\n(1) Iuran JKK bagi Peserta bukan penerima Upah sebesar 1% (satu persen) dari penghasilan."
    asked = "Pasal 16\n(1) Iuran JKK bagi Peserta penerima Upah sebesar 0,24% (nol koma dua puluh empat persen)."
    question = "Berapa iuran JKK bagi peserta penerima upah?"
    ayat = lambda text: (Span("ayat (1)", text.index("(1)"), len(text)),)  # noqa: E731
    context = (ContextItem("others", "PP 44/2015", "Pasal 20", others, False, "id", 0.9, spans=ayat(others)),
               ContextItem("asked", "PP 44/2015", "Pasal 16", asked, False, "id", 0.8, spans=ayat(asked)))
    settings = profile.settings.generator.model_copy(update={"min_coverage": 0.3, "agreement": None, "answer_at": None})
    claimed, scores = _claimed(qa, settings, question, context, {0: 0.95, 1: 0.7})
    assert claimed == ["asked"]
    assert any(s.chunk_id == "others" and s.probability == 0.95 and not s.claimed for s in scores)
    # with answer_at, the unit about the others does not count as the regulations' best either: alone, the asked
    # unit's 0.7 is under answer_at, so nothing is claimed (the 0.95 was what let it through)
    gated = settings.model_copy(update={"answer_at": 0.8})
    assert _claimed(qa, gated, question, context, {0: 0.95, 1: 0.7})[0] == []
    assert _claimed(qa, gated, question, context, {0: 0.95, 1: 0.85})[0] == ["asked"]


@pytest.mark.parametrize("question, text, said", [
    ("Kapan Bob Dylan meninggal?", "Bob Dylan lahir dengan nama Robert Allen Zimmerman, 24 Mei 1941.", "meninggal/lahir"),
    ("apakah agama minoritas di Filipina?", "Agama di Filipina ditandai dengan mayoritas penganut Kristen.",
     "minoritas/mayoritas"),
    ("Berapa tarif bea keluar atas kelapa sawit?", "Tarif bea masuk atas kelapa sawit sebesar 5%.", "keluar/masuk"),
    ("When was the company dissolved?", "The company was founded in 1901.", "dissolved/founded"),
    ("Kapan Ludwig Tieck meninggal?", "Ludwig Tieck lahir pada 1773 dan meninggal pada 1853.", None),  # both said
    ("Kapan Ludwig Tieck lahir?", "Ludwig Tieck lahir pada tanggal 31 Mei 1773.", None),
    ("Siapa yang lahir dan meninggal di Berlin?", "Ludwig Tieck lahir di Berlin.", None),  # the question says both
    # a negated side says what the other says: "tidak berdarah panas" is "berdarah dingin"
    ("Kelompok hewan apakah yang tidak berdarah panas?", "Reptil adalah hewan berdarah dingin.", None),
])
def test_a_text_saying_the_opposite_of_a_word_asked(question, text, said):
    from pipeline.backends.quote_checks import opposite_word

    assert opposite_word(question, text) == said


def test_a_sentence_saying_the_opposite_of_what_was_asked_is_not_claimed(qa, profile):
    born = "Johann Ludwig Tieck lahir pada tanggal 31 Mei 1773 di Berlin."
    died = "Johann Ludwig Tieck meninggal pada tanggal 28 April 1853 di Berlin."
    question = "Kapan Johann Ludwig Tieck meninggal?"
    context = (ContextItem("born", "Tieck", "alinea 1", born, False, "id", 0.9),
               ContextItem("died", "Tieck", "alinea 2", died, False, "id", 0.8))
    settings = profile.settings.generator.model_copy(update={"min_coverage": 0.3, "prose_reading": None})
    claimed, scores = _claimed(qa, settings, question, context, {0: 0.9, 1: 0.6})
    assert claimed == ["died"]
    assert any(s.chunk_id == "born" and s.probability == 0.9 and not s.claimed for s in scores)
    assert _claimed(qa, settings, question, context[:1], {0: 0.9})[0] == []  # the birth sentence alone answers nothing


class _FakeCrossEncoder:
    """A test double for reader/neural.CrossEncoder: log-odds by the passage's chunk text (`by_word`, else 0); it
    records what it was asked to read."""

    name = "cross-encoder-fake"

    def __init__(self, by_word: dict[str, float]):
        self.by_word, self.asked = by_word, []

    def logits(self, question, passages):
        import numpy as np
        self.asked += list(passages)
        return np.array([next((v for w, v in self.by_word.items() if w in p), 0.0) for p in passages])


@pytest.mark.parametrize("logit, claimed", [(3.0, ["new"]), (-3.0, [])])
def test_the_cross_encoder_weighs_in_on_the_reader_s_best_regulation_candidates(qa, profile, logit, claimed):
    """generator.cross_encoder with agreement.neural: the reader's best candidates (here 1) are read again; a
    confident reading lifts an agreeing best past answer_at, a doubtful one leaves it under; the log-odds are kept."""
    from pipeline.config import AgreementCalibration, CrossEncoderSettings

    settings = profile.settings.generator.model_copy(update={
        "min_coverage": 0.3, "answer_at": 0.8, "cross_encoder": CrossEncoderSettings(weights="x", candidates=1),
        "agreement": AgreementCalibration(logit=0.5, agree=1.0, neural=0.5, intercept=0.0)})
    req = _regulations(qa)
    ce = _FakeCrossEncoder({"10%": logit})  # the first passage's rate
    gen = ExtractiveGenerator(settings, qa, None, _FakeReader({0: 0.6, 1: 0.3}), cross_encoder=ce)
    out = asyncio.run(gen.generate(req))
    assert [c["citations"][0]["chunk_id"] for c in json.loads(out.raw)["claims"]] == claimed
    read = [s for s in out.scores if s.neural is not None]
    assert len(read) == 1 == len(ce.asked) and read[0].chunk_id == "new" and read[0].neural == logit
    assert gen.name.endswith("+cross-encoder-fake")


def _chapters(qa, question="Bagaimana ketentuan mengenai penyelesaian sengketa dalam program jaminan?"):
    """Two passages of one regulation in two chapters; the retrieval ranks the complaints chapter first."""
    from pipeline.types import Span

    complaints = "Pasal 57\n(1) Keluhan peserta program jaminan disampaikan kepada BPJS dan diselesaikan paling lama 5 hari."
    disputes = "Pasal 58\n(1) Sengketa dalam penyelenggaraan program jaminan diselesaikan secara musyawarah oleh para pihak."
    spans = lambda text: (Span("ayat (1)", text.index("(1)"), len(text)),)  # noqa: E731
    terms = qa.term_groups(qa.normalise(question), "id")
    context = (ContextItem("keluhan", "PENYELENGGARAAN PROGRAM JAMINAN", "Pasal 57", complaints, False, "id", 0.9,
                           "BAB VII PENANGANAN KELUHAN", spans=spans(complaints)),
               ContextItem("sengketa", "PENYELENGGARAAN PROGRAM JAMINAN", "Pasal 58", disputes, False, "id", 0.8,
                           "BAB VIII PENYELESAIAN SENGKETA", spans=spans(disputes)))
    return GenerationRequest(question=question, lang="id", context=context, terms=tuple(terms))


@pytest.mark.parametrize("question, uploaded, first", [
    (None, None, "sengketa"),                # the question asks about the disputes chapter as a whole: its passage answers
    (None, "sengketa", None),                # that passage is an upload's: it claims no chapter
    ("Apakah sengketa dalam program jaminan diselesaikan secara musyawarah?", None, None),  # yes/no: one provision asked
])
def test_a_question_about_a_chapter_is_answered_from_that_chapter(qa, profile, question, uploaded, first):
    """generator.chapter with agreement's `chapter` term: the reader reads both passages alike (0.3), the retrieval ranks
    the other chapter's passage first; the chapter the question names decides (the first passage, re-read by agreement
    at the regulation threshold, is heard beside it), and the trace says which chapter it was. Without the chapter,
    nothing reaches answer_at."""
    import dataclasses

    from pipeline.config import AgreementCalibration, ChapterSettings

    settings = profile.settings.generator.model_copy(update={
        "min_coverage": 0.3, "answer_at": 0.8, "chapter": ChapterSettings(share=0.7),
        "agreement": AgreementCalibration(logit=0.641, agree=1.535, consensus=1.407, chapter=3.0, intercept=-0.254)})
    gen = ExtractiveGenerator(settings, qa, None, _FakeReader({0: 0.3, 1: 0.3}))
    req = _chapters(qa, *(q for q in [question] if q))
    req = dataclasses.replace(req, context=tuple(dataclasses.replace(c, uploaded_by="key:someone")
                                                 if c.chunk_id == uploaded else c for c in req.context))
    out = asyncio.run(gen.generate(req))
    claimed = [c["citations"][0]["chunk_id"] for c in json.loads(out.raw)["claims"]]
    assert (claimed[0] if claimed else None) == first
    marked = {s.chunk_id: s.chapter for s in out.scores if s.chapter}
    assert marked == ({"sengketa": "penyelesaian sengketa"} if first else {})


def test_without_the_chapter_term_a_chapter_is_marked_in_the_trace_but_changes_nothing(qa, profile):
    from pipeline.config import AgreementCalibration, ChapterSettings

    agreement = AgreementCalibration(logit=0.641, agree=1.535, consensus=1.407, intercept=-0.254)
    base = profile.settings.generator.model_copy(update={"min_coverage": 0.3, "answer_at": 0.8, "agreement": agreement,
                                                         "chapter": None})
    runs = [asyncio.run(ExtractiveGenerator(s, qa, None, _FakeReader({0: 0.3, 1: 0.3})).generate(_chapters(qa)))
            for s in (base, base.model_copy(update={"chapter": ChapterSettings()}))]
    assert runs[0].raw == runs[1].raw
    assert [s.chapter for s in runs[1].scores if s.chapter] == ["penyelesaian sengketa"]
    assert not any(s.chapter for s in runs[0].scores)


def test_the_chapter_term_needs_its_settings_and_agreement(profile):
    from pydantic import ValidationError

    from pipeline.config import AgreementCalibration, ChapterSettings

    g = profile.settings.generator
    with pytest.raises(ValidationError, match="needs generator.chapter"):
        g.model_validate({**g.model_dump(), "chapter": None,
                          "agreement": AgreementCalibration(logit=1, agree=1, chapter=2, intercept=0).model_dump()})
    with pytest.raises(ValidationError, match="needs generator.agreement"):
        g.model_validate({**g.model_dump(), "agreement": None, "chapter": ChapterSettings().model_dump()})


def test_a_quote_the_layout_cut_off_mid_phrase_is_cut_short_and_an_item_of_a_list_is_not():
    from pipeline.backends.quote_checks import cut_short

    assert cut_short("Pasal II ini mulai berlaku pada tanggal")
    assert cut_short("The regulation takes effect on")
    assert not cut_short("telah digunakan paling singkat 2 (dua) tahun sejak tanggal pemberitahuan pabean impor; atau")
    assert not cut_short("tidak melakukan tindakan yang dapat mengakibatkan kerugian bagi yang dilayani, dan")
    assert not cut_short("a. musim atau cuaca: atau")  # a scan's colon for the semicolon
    assert not cut_short("b. pekerjaan yang bersifat sementara dan")
    assert not cut_short("Peraturan Menteri ini mulai berlaku pada tanggal diundangkan.")
    assert not cut_short("dibayarkan pada bulan Juli")


def test_an_entry_into_force_clause_in_an_annex_is_a_forms_not_the_documents():
    from pipeline.backends.quote_checks import annexed_form

    assert annexed_form("Lampiran alinea 8", "Keputusan Menteri ini mulai berlaku pada tanggal ditetapkan.")
    assert annexed_form("Annex I", "This Decree takes effect on the date it is signed.")
    assert not annexed_form("Pasal 12", "Peraturan Menteri ini mulai berlaku setelah 60 (enam puluh) hari terhitung "
                                        "sejak tanggal diundangkan.")
    assert not annexed_form("Lampiran alinea 3", "Jaminan tertulis berlaku paling lama 6 (enam) bulan.")


# PP 34/2021 states one rule for two cases in two Pasal: Pasal 14 (an employer's RPTKA) and Pasal 15 (a government
# body's, exempt from the assessment); the question does not say which case it asks about
_P14 = ("Pasal 14\n(1) Pengesahan RPTKA diajukan oleh Pemberi Kerja secara daring kepada Menteri.\n"
        "(4) Data calon TKA dan dokumen dilakukan verifikasi oleh Menteri atau pejabat yang ditunjuk paling lama 2 "
        "(dua) hari kerja.")
_P15 = ("Pasal 15\n(1) Permohonan Pengesahan RPTKA yang diajukan oleh instansi Pemerintah dikecualikan dari penilaian "
        "kelayakan.\n(4) Data calon TKA dan dokumen dilakukan verifikasi oleh Menteri atau pejabat yang ditunjuk "
        "paling lama 2 (dua) hari kerja.")


def _ayat(text: str):
    from pipeline.types import Span

    marks = [text.index(m) for m in ("(1)", "(4)")]
    return tuple(Span(f"ayat ({n})", a, b) for n, a, b in zip((1, 4), marks, [marks[1] - 1, len(text)]))


@pytest.mark.parametrize("other, quoted", [
    (_P15, True),
    # one word more is another rule: "3 (tiga) hari kerja" or "paling lama" dropped is not the same sentence
    (_P15.replace("2 (dua) hari kerja.", "3 (tiga) hari kerja."), False),
    (_P15.replace(" paling lama", ""), False),
])
def test_a_sentence_the_document_states_in_two_places_is_quoted_from_both(qa, profile, other, quoted):
    question = "Berapa lama proses verifikasi data calon TKA?"
    context = (ContextItem("p14", "PP 34/2021", "Pasal 14", _P14, False, "id", 0.9, spans=_ayat(_P14)),
               ContextItem("p15", "PP 34/2021", "Pasal 15", other, False, "id", 0.8, spans=_ayat(other)))
    # coverage keeps the sentences that state the question's words themselves (not by their passage's)
    settings = profile.settings.generator.model_copy(update={"min_coverage": 0.8, "agreement": None,
                                                             "answer_at": None, "bound_ayat": False})
    req = GenerationRequest(question=question, lang="id", context=context,
                            terms=tuple(qa.term_groups(qa.normalise(question), "id")))
    out = asyncio.run(ExtractiveGenerator(settings, qa, None, _FakeReader({0: 0.9, 1: 0.6})).generate(req))
    claims = json.loads(out.raw)["claims"]
    first = claims[0]["citations"]
    assert first[0]["chunk_id"] == "p14" and first[0]["quote"].startswith("Data calon TKA")
    twin = [c for c in first if c["chunk_id"] == "p15"]
    if quoted:  # the same words in Pasal 15(4): one claim, both places, its own first
        assert len(twin) == 1 and twin[0]["quote"] == first[0]["quote"] and twin[0]["quote"] in other
        assert len(claims) == 1  # nor a claim of its own besides (its passage is quoted: one claim per passage)
    else:
        assert twin == []


def test_an_item_two_enumerations_share_is_not_one_rule_stated_twice(qa, profile):
    from pipeline.types import Span

    duty = "melaksanakan kehidupan demokrasi dalam penyelenggaraan pemerintahan daerah dan menaati peraturan;"

    def pasal(n: int, who: str) -> tuple[str, tuple]:
        text = f"Pasal {n}\n(1) {who} berkewajiban:\na. {duty}\nb. menjaga ketenteraman dan ketertiban masyarakat."
        a, b = text.index("a. "), text.index("b. ")
        return text, (Span("ayat (1)", text.index("(1)"), len(text)), Span("ayat (1) huruf a", a, b - 1),
                      Span("ayat (1) huruf b", b, len(text)))
    (gov, gspans), (reg, rspans) = pasal(5, "Gubernur"), pasal(6, "Bupati")
    question = "Siapa yang wajib melaksanakan kehidupan demokrasi dalam penyelenggaraan pemerintahan daerah?"
    context = (ContextItem("gov", "UU 23/2014", "Pasal 5", gov, False, "id", 0.9, spans=gspans),
               ContextItem("reg", "UU 23/2014", "Pasal 6", reg, False, "id", 0.8, spans=rspans))
    settings = profile.settings.generator.model_copy(update={"min_coverage": 0.6, "agreement": None,
                                                             "answer_at": None, "bound_ayat": False})
    req = GenerationRequest(question=question, lang="id", context=context,
                            terms=tuple(qa.term_groups(qa.normalise(question), "id")))
    out = asyncio.run(ExtractiveGenerator(settings, qa, None, _FakeReader({0: 0.9, 1: 0.6})).generate(req))
    first = json.loads(out.raw)["claims"][0]["citations"]
    assert first[0]["chunk_id"] == "gov" and all(c["chunk_id"] == "gov" for c in first)
