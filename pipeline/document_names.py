"""How a document is named where it is cited: the short names of Indonesian regulation types ("PMK", "Perbup"),
the place a regional instrument is of, and the citation name built from a document's type, number and year.
Ingest writes a document's `cite_as` with it (ingest/metadata.py); references between documents and the
documents a question names are read with the same tables (references.py), so all three name a document alike."""
from __future__ import annotations

import re

_CODED_NUMBER = re.compile(r"[A-Z]{2,5}-\d")  # "PER-11/PJ/2025": already how it is cited
_PLACE_PREFIX = {"Kabupaten": "Kab. ", "Kota": "Kota ", "Provinsi": "Prov. "}

# how citations abbreviate a document type; references between documents (references.py) read the same table
SHORT_NAMES = {
    "Undang-Undang": "UU", "Undang-Undang Dasar": "UUD", "Undang-Undang Darurat": "UU Darurat",
    "Peraturan Pemerintah Pengganti Undang-Undang": "Perppu", "Peraturan Pemerintah": "PP",
    "Peraturan Presiden": "Perpres", "Keputusan Presiden": "Keppres", "Instruksi Presiden": "Inpres",
    "Peraturan Menteri Keuangan": "PMK", "Keputusan Menteri Keuangan": "KMK",
    "Peraturan Menteri Dalam Negeri": "Permendagri", "Peraturan Otoritas Jasa Keuangan": "POJK",
    "Peraturan Direktur Jenderal Pajak": "Perdirjen Pajak",
}
REGIONAL_SHORT_NAMES = {"Peraturan Daerah": "Perda", "Peraturan Bupati": "Perbup", "Peraturan Walikota": "Perwali",
                        "Peraturan Gubernur": "Pergub"}
_REGIONAL_SHORT = {**REGIONAL_SHORT_NAMES, "Peraturan Wali Kota": "Perwali"}
_ISSUER_PLACE = re.compile(r"^(?:Bupati|Wali\s*[Kk]ota|Gubernur|Pemerintah\s+(?P<level>Kabupaten|Kota|Provinsi|Daerah))"
                           r"\s+(?P<place>.+)$")


def issuer_place(doc_type: str | None, issuer: str | None) -> str | None:
    """The place a regional instrument is of ("Kotabaru" for a Peraturan Bupati of "Bupati Kotabaru", "Bone Bolango"
    for "Pemerintah Kabupaten Bone Bolango"); None for any other document."""
    if doc_type not in _REGIONAL_SHORT:
        return None
    m = _ISSUER_PLACE.match(issuer or "")
    return " ".join(m["place"].split()) if m else None


def citation(doc_type: str | None, number: str | None, year: int | None, issuer: str | None = None) -> str | None:
    """The short name citations use: "PMK 98/2025", "Perbup Kotabaru 9/2025", "Perda Kab. Magelang 8/2010",
    "PSAK 71"; "<doc_type> <number>/<year>" for other types. None when there is nothing to name it by."""
    if not doc_type:
        return None
    if doc_type in ("PSAK", "ISAK"):
        return f"{doc_type} {number}" if number else None
    if number and _CODED_NUMBER.match(number):
        return number
    name, regional = SHORT_NAMES.get(doc_type, doc_type), doc_type in _REGIONAL_SHORT
    if regional:
        m = _ISSUER_PLACE.match(issuer or "")
        place = (_PLACE_PREFIX.get(m["level"] or "", "") + m["place"]) if m else ""
        name = f"{_REGIONAL_SHORT[doc_type]} {place}".strip()
    if number and "/" in number:
        return f"{name} {number}"
    if number and year:
        return f"{name} {number}/{year}"
    if year:
        return f"{name} Tahun {year}"
    if number:
        return f"{name} Nomor {number}"
    return name if regional and name != _REGIONAL_SHORT[doc_type] else None  # "Perwali Surakarta" still says which
