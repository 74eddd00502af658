"""The direct answer line: what a consultant writes down, built only from supported claims.

"10% [1] — TINGGI, per 2026-12-05. Riwayat: 15% [2] — dicabut mulai 2025-04-01 oleh PMI 7/2025 › … › Pasal 9 ›
ayat (1)." Every value in it is a figure as a claim's quote writes it (or, when the question asks for no figure or the
claim states several, the claim's own quoted text); everything else is fixed wording, a band, a date or a receipt's
citation path. No text that no quote supports. `[n]` is the n-th supported claim as the answer lists them.
"""
from __future__ import annotations

from collections.abc import Sequence

from .numbers import extract_figures
from .status import standing_words
from .types import DirectAnswer, VerifiedClaim

# the figures a route asks for (configs/routes.yaml): a rate is a percentage or an amount, a deadline a date, …
WANTED = {"rate": ("percent", "money"), "sanction": ("money", "percent"), "quantity": ("number", "money", "percent"),
          "deadline": ("date",)}


def value_of(claim: VerifiedClaim, required: Sequence[str]) -> str:
    """The figure the question asks for, as the claim's text writes it, when the claim states exactly one of that
    kind; else the claim's text (a statement is its own answer)."""
    kinds = tuple(k for r in required for k in WANTED.get(r, ()))
    if kinds:
        for kind in kinds:
            found = {f.value: f.text for f in extract_figures(claim.text) if f.kind == kind}
            if len(found) == 1:
                return next(iter(found.values()))
            if found:
                break
    return claim.text


UNSETTLED = {"id": "Belum pasti berlaku per", "en": "Standing not settled on"}
OUT_OF_FORCE = {"id": "Tidak berlaku per", "en": "Not in force on"}
BANDS = {"id": {"TINGGI": "TINGGI", "SEDANG": "SEDANG", "RENDAH": "RENDAH"},
         "en": {"TINGGI": "HIGH", "SEDANG": "MEDIUM", "RENDAH": "LOW"}}


def direct_answer(claims: Sequence[VerifiedClaim], required: dict[int, Sequence[str]], lang: str,
                  as_of: str | None) -> DirectAnswer | None:
    """The line for an answer's supported claims (in the order shown: in force first): per question part, its first
    claim's value with its band and date, then the part's claims that are not in force on that date, each with what
    ended it. `required`: each part's required evidence categories. None when nothing is supported."""
    shown = [c for c in claims if c.status == "supported"]
    if not shown:
        return None
    number = {id(c): n for n, c in enumerate(shown, 1)}
    pieces, cited = [], []
    for part in dict.fromkeys(c.part for c in shown):
        mine = [c for c in shown if c.part == part]
        lead = mine[0]
        band = lead.confidence.band if lead.confidence else None
        said = f"{value_of(lead, required.get(part, ()))} [{number[id(lead)]}]"
        cited.append(number[id(lead)] - 1)
        if band:
            said += f" — {BANDS['id' if lang == 'id' else 'en'][band]}"
        if as_of and lead.standing is not None and lead.standing.state == "in_force":
            said += f", {'per' if lang == 'id' else 'as of'} {as_of}"
        elif lead.standing is not None:
            said += f" ({standing_words(lead.standing, lang, brief=True)})"
        # after the lead, the part's claims not known to be in force: those the collection cannot settle, then history
        for states, words in ((("unknown",), UNSETTLED), (("ended", "not_yet"), OUT_OF_FORCE)):
            older = [c for c in mine[1:] if c.standing is not None and c.standing.state in states]
            if older:
                said += f". {words['id' if lang == 'id' else 'en']} {as_of}: " + "; ".join(
                    f"{value_of(c, required.get(part, ()))} [{number[id(c)]}] — "
                    f"{standing_words(c.standing, lang, brief=True)}" for c in older)
                cited += [number[id(c)] - 1 for c in older]
        pieces.append(said)
    band = shown[0].confidence.band if shown[0].confidence else None
    return DirectAnswer(text=" · ".join(pieces) + ".", band=band, claims=tuple(cited), as_of=as_of)
