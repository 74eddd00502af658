"""`saksi ingest`'s progress bar: drawn on a terminal over documents and chunks embedded; elsewhere
(a log file, --json) nothing is drawn and the per-document lines are exactly what they were."""
from __future__ import annotations

import io
import json
import re

import pytest

from pipeline.backends.fakes import FakeHashEmbedder
from pipeline.cli import main
from pipeline.corpus import Corpus, Ingestor
from pipeline.progress import HEARTBEAT, IngestBar

from ..conftest import SAMPLE

pytestmark = pytest.mark.integration


class Tty(io.StringIO):
    """A terminal, as far as the bar can tell."""

    def isatty(self) -> bool:
        return True


def lines_of(stream: io.StringIO) -> list[str]:
    """What a reader of the stream sees line by line: each line as the last carriage return left it
    (a redrawn bar is its last drawing, padded)."""
    return [line.split("\r")[-1].rstrip() for line in stream.getvalue().split("\n")]


def test_the_bar_counts_files_by_bytes_and_chunks_as_they_are_embedded():
    tty = Tty()
    bar = IngestBar(tty, width=10)
    bar.begin([100, 300])
    assert tty.getvalue().startswith("\r  [..........] 0/2 documents, 0 chunks embedded")
    bar.embedding("a", 4)
    bar.embedded(4)
    bar.file_done()  # a quarter of the bytes
    assert "\r  [##........] 1/2 documents, 4 chunks embedded" in tty.getvalue()
    bar.embedding("b", 10)
    assert "1/2 documents, 4 chunks embedded (b: 0/10)" in tty.getvalue()
    bar.say("  b: 10 chunks (b.md)")
    bar.embedded(10)
    bar.file_done()
    bar.close()
    seen = lines_of(tty)
    assert seen[0] == "  b: 10 chunks (b.md)"  # a line of its own, over the bar
    assert re.fullmatch(r"  \[##########\] 2/2 documents, 14 chunks embedded, [\d.]+ chunks/s", seen[1])
    assert seen[2:] == [""] and tty.getvalue().endswith("\n")


def test_nothing_is_drawn_off_a_terminal_and_a_line_is_the_line():
    plain = io.StringIO()
    bar = IngestBar(plain)
    bar.begin([10])
    bar.embedding("a", 2)
    bar.embedded(2)
    bar.say("  a: 2 chunks (a.md)")
    bar.file_done()
    bar.close()
    assert not bar.on and plain.getvalue() == "  a: 2 chunks (a.md)\n"
    nothing = IngestBar(Tty())
    nothing.begin([])  # nothing changed: no bar
    nothing.close()
    assert not nothing.on and nothing.stream.getvalue() == ""


def test_off_a_terminal_a_long_ingest_says_where_it_is_every_few_seconds(monkeypatch):
    clock = [100.0]
    monkeypatch.setattr("pipeline.progress.time.perf_counter", lambda: clock[0])
    plain = io.StringIO()
    bar = IngestBar(plain)
    bar.begin([10, 10])
    bar.embedding("a", 64)
    clock[0] += 2
    bar.embedded(32)  # within HEARTBEAT of the start: nothing yet
    assert plain.getvalue() == ""
    clock[0] += HEARTBEAT
    bar.embedded(32)
    clock[0] += 1
    bar.file_done()  # one second later: no second line
    lines = plain.getvalue().splitlines()
    assert len(lines) == 1 and re.fullmatch(r"0/2 documents, 64 chunks embedded \(a: 64/64\), [\d.]+ chunks/s, "
                                            r"\d+s left", lines[0]), lines
    assert "\r" not in plain.getvalue()  # plain lines, no bar


def test_an_ingest_on_a_terminal_draws_documents_and_chunks(tmp_path, profile):
    tty = Tty()
    bar = IngestBar(tty)
    with Corpus(tmp_path / "data", profile, embedder=FakeHashEmbedder()) as corpus:
        report = Ingestor(corpus, bar.say, meter=bar).ingest([SAMPLE])
    bar.close()
    seen = [line for line in lines_of(tty) if line]
    docs = [line for line in seen if re.match(r"  \S+: \d+ chunks \(", line)]
    assert len(docs) == len(report.ingested) == 4
    assert re.fullmatch(rf"  \[#+\] 4/4 documents, {report.embedded} chunks embedded, [\d.]+ chunks/s", seen[-1])
    assert report.embedded == report.total_chunks > 0
    assert tty.getvalue().count("\r  [") > len(report.ingested)  # redrawn as it went


def test_off_a_terminal_the_lines_are_as_they_were(tmp_path, profile):
    said: list[str] = []
    with Corpus(tmp_path / "a", profile, embedder=FakeHashEmbedder()) as corpus:
        corpus.ingest([SAMPLE], progress=said.append)  # no bar at all
    plain = io.StringIO()
    bar = IngestBar(plain)
    with Corpus(tmp_path / "b", profile, embedder=FakeHashEmbedder()) as corpus:
        Ingestor(corpus, bar.say, meter=bar).ingest([SAMPLE])
    bar.close()
    assert said and plain.getvalue().replace(str(tmp_path / "b"), "<d>") == \
        "".join(f"{m}\n" for m in said).replace(str(tmp_path / "a"), "<d>")


@pytest.fixture
def fake_model(monkeypatch):
    """`saksi ingest` in this process with the fake embedder in place of the profile's."""
    monkeypatch.setattr("pipeline.corpus.corpus.make_embedder", lambda profile: FakeHashEmbedder())


def test_cli_draws_on_a_terminal_only_and_never_with_json(tmp_path, monkeypatch, capsys, fake_model):
    tty = Tty()
    monkeypatch.setattr("sys.stderr", tty)
    assert main(["ingest", str(SAMPLE), "--data-dir", str(tmp_path / "tty")]) == 0
    assert "\r  [" in tty.getvalue() and "4/4 documents" in tty.getvalue()
    assert "4 ingested" in capsys.readouterr().out

    tty = Tty()
    monkeypatch.setattr("sys.stderr", tty)
    assert main(["ingest", str(SAMPLE), "--data-dir", str(tmp_path / "json"), "--json"]) == 0
    assert tty.getvalue() == "" and len(json.loads(capsys.readouterr().out)["ingested"]) == 4

    log = io.StringIO()  # a log file: the per-document lines, no bar
    monkeypatch.setattr("sys.stderr", log)
    assert main(["ingest", str(SAMPLE), "--data-dir", str(tmp_path / "log")]) == 0
    assert "\r" not in log.getvalue() and len(re.findall(r"(?m)^  \S+: \d+ chunks \(", log.getvalue())) == 4
