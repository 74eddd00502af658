"""The official `openai` Python SDK against a real `saksi serve` (issue 29): models, answers and refusals with their
receipts in the text, streamed and not, and saksi's errors as the SDK's exceptions. The server is the browser tests'
(`tests.browser.ServedSite`: the sample corpus, a reader key of "default"), plus a second collection and an admin key
made before it starts."""
from __future__ import annotations

import openai  # the dev extra installs it (`make test`): a missing SDK fails these tests, it does not skip them
import pytest

from tests.browser import ANSWERED, REFUSED, SAMPLE, ServedSite, saksi

pytestmark = pytest.mark.integration

NOTE = ("---\nid: catatan-sdk\ntitle: Catatan Uji SDK\ndoc_type: guidance\nlang: id\n---\n\n"
        "1. Bea meterai atas kuitansi sewa gudang uji SDK adalah Rp10.000 per dokumen.\n")


class TwoCollections(ServedSite):
    """The sample corpus as "default" and a note as "gudang"; a reader of "default" and an admin. Its shutdown is
    not under test here: it is given 5 s before its session is killed."""

    admin: str = ""

    def prepare(self) -> None:
        notes = self.root / "notes"
        notes.mkdir(parents=True)
        (notes / "catatan.md").write_text(NOTE, encoding="utf-8")
        saksi("ingest", str(SAMPLE), "--data-dir", str(self.data_dir))
        saksi("ingest", str(notes), "--collection", "gudang", "--data-dir", str(self.data_dir))
        self.reader = saksi("keys", "create", "--role", "reader", "--name", "sdk reader",
                            "--data-dir", str(self.data_dir)).stdout.strip()
        self.admin = saksi("keys", "create", "--role", "admin", "--collection", "*", "--name", "sdk admin",
                           "--data-dir", str(self.data_dir)).stdout.strip()


@pytest.fixture(scope="module")
def site():
    with TwoCollections(grace_s=5) as served:  # started, and stopped with its Ray session at the end
        yield served


def client(site, key=None):
    return openai.OpenAI(base_url=site.url + "/v1", api_key=key or site.reader, max_retries=0, timeout=120)


def ask(site, question, key=None, **kw):
    return client(site, key).chat.completions.create(model=kw.pop("model", "saksi"),
                                                     messages=[{"role": "user", "content": question}], **kw)


def test_the_sdk_lists_the_models_the_key_may_read(site):
    assert [m.id for m in client(site).models.list()] == ["saksi"]
    assert [m.id for m in client(site, site.admin).models.list()] == ["saksi", "saksi:gudang"]


def test_an_answer_and_a_refusal_through_the_sdk_carry_their_receipts_in_the_text(site):
    r = ask(site, ANSWERED, temperature=0.2)
    content, extra = r.choices[0].message.content, r.model_extra
    answer = extra["saksi"]["answer"]
    supported = [c for c in answer["claims"] if c["status"] == "supported"]
    assert answer["outcome"] == "answer" and supported and r.choices[0].finish_reason == "stop"
    for x in (x for c in supported for x in c["citations"]):
        assert x["path"] in content and " ".join(x["quote"].split()) in content
    assert extra["citations"] and all(u.startswith(site.url + "/ui/documents/default/") for u in extra["citations"])
    assert extra["saksi"]["ignored"] == ["temperature"] and len(extra["saksi"]["trace_id"]) == 32
    refused = ask(site, REFUSED)
    assert refused.choices[0].message.content.startswith("**Tidak ada jawaban yang dapat dikutip.**")
    assert refused.model_extra["saksi"]["answer"]["outcome"] == "refusal"


def test_a_streamed_answer_through_the_sdk_shows_only_verified_claims_then_its_receipts(site):
    text, sources, final = "", [], None
    for chunk in ask(site, ANSWERED, stream=True):
        if chunk.choices and chunk.choices[0].delta.content:
            text += chunk.choices[0].delta.content
        event = (chunk.model_extra or {}).get("event")
        if event and event["type"] == "source":
            sources.append(event["data"])
        if chunk.choices and chunk.choices[0].finish_reason:
            final = chunk
    answer = final.model_extra["saksi"]["answer"]
    supported = [c for c in answer["claims"] if c["status"] == "supported"]
    assert supported and all(" ".join(c["text"].split()) in text for c in supported)
    quotes = list(dict.fromkeys(x["quote"] for c in supported for x in c["citations"]))
    assert [s["document"][0] for s in sources] == quotes and "**Sumber**" in text
    assert final.model_extra["citations"] == [s["source"]["url"] for s in sources]
    whole = ask(site, ANSWERED).model_extra["saksi"]["answer"]
    assert [c["text"] for c in whole["claims"] if c["status"] == "supported"] == [c["text"] for c in supported]
    refused = "".join(c.choices[0].delta.content or "" for c in ask(site, REFUSED, stream=True) if c.choices)
    assert "**Tidak ada jawaban yang dapat dikutip.**" in refused


def test_saksis_errors_are_the_sdks_exceptions(site):
    with pytest.raises(openai.PermissionDeniedError):  # a reader of "default" asking another collection
        ask(site, "Berapa bea meterai kuitansi sewa gudang?", model="saksi:gudang")
    assert ask(site, "Berapa bea meterai kuitansi sewa gudang uji SDK?", key=site.admin,
               model="saksi:gudang").model_extra["saksi"]["collection"] == "gudang"
    with pytest.raises(openai.NotFoundError):
        ask(site, ANSWERED, model="gpt-4o")
    with pytest.raises(openai.BadRequestError) as e:
        ask(site, ANSWERED, tools=[{"type": "function", "function": {"name": "f", "parameters": {}}}],
            tool_choice="required")
    assert "tool_choice:" in str(e.value)
    with pytest.raises(openai.AuthenticationError):
        ask(site, ANSWERED, key="saksi_000000000000_" + "x" * 40)
    with pytest.raises(openai.PermissionDeniedError):  # streamed: refused before the first chunk
        list(ask(site, ANSWERED, model="saksi:gudang", stream=True))
