"""The adversarial gate suite: every failure mode caught by the real gates, and a suite
that notices when a gate is broken."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from pipeline.backends.fakes import FakeHashEmbedder
from pipeline.eval.adversarial import MODES, run_adversarial

pytestmark = pytest.mark.integration

REQUIRED = {"fabricated_quote", "quote_from_uncited_chunk", "paraphrased_quote", "changed_number",
            "swapped_unit_or_currency", "wrong_year", "citation_not_retrieved", "negated_claim",
            "example_as_requirement", "prompt_injection_quoted"}


def test_catalogue_covers_every_mode_the_contract_names():
    assert REQUIRED <= {m.name for m in MODES}


def test_every_mode_is_exercised_and_caught(profile, tmp_path):
    report = run_adversarial(profile, tmp_path, embedder=FakeHashEmbedder())
    assert report["passed"], report["failures"]
    for m in report["modes"]:
        assert m["exercised"] == m["trials"] > 0, m
        assert m["catch_rate"] == 1.0, m
        if m["mode"] != "faithful" and m["mode"] != "example_as_requirement":
            assert m["expected_reason_rate"] == 1.0, m  # caught by the gate that should catch it
    assert (tmp_path / "adversarial.json").is_file() and list((tmp_path / "traces").glob("*.json"))


def test_a_disabled_number_check_is_noticed(profile, monkeypatch):
    monkeypatch.setattr("pipeline.gates.figures_without_basis", lambda *a, **k: [])
    report = run_adversarial(profile, None, embedder=FakeHashEmbedder())
    assert not report["passed"]
    assert {"changed_number", "swapped_unit_or_currency", "wrong_year"} <= set(report["failures"])


def test_a_gate_that_rejects_everything_fails_the_control(profile, monkeypatch):
    monkeypatch.setattr("pipeline.gates.contains_normalised", lambda *a, **k: False)
    report = run_adversarial(profile, None, embedder=FakeHashEmbedder())
    assert not report["passed"] and any("faithful" in f for f in report["failures"])


def test_cli_adversarial_with_the_lite_profile(tmp_path):
    done = subprocess.run([str(Path(sys.executable).parent / "saksi"), "eval", "--adversarial", "--json",
                           "--out", str(tmp_path)], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["passed"] and report["deterministic_all_caught"]
    assert all(m["catch_rate"] == 1.0 for m in report["modes"])
