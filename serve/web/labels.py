"""The web page's words, in Indonesian and English (the answer's own words: pipeline/render.py).

`labels(lang)` is what every template gets as `L`. A key missing from one language falls back
to the other, so a page never shows a raw key; tests/web/ checks both have the same keys.
"""
from __future__ import annotations

import re

from pipeline.render import LABELS as ANSWER_LABELS

LANGS = ("id", "en")

WEB = {
    "id": {
        "app": "saksi", "tagline": "Jawaban dengan kutipan persis, atau penolakan yang menyebut apa yang kurang.",
        "nav_ask": "Tanya", "nav_corpus": "Korpus", "signout": "Keluar", "signed_in_as": "Masuk sebagai",
        "lang_toggle": "English", "skip": "Lompat ke isi",
        "signin_title": "Masuk", "signin_help": "Tempel kunci API Anda (dari `saksi keys create`). Kunci disimpan "
                                                "di cookie peramban ini saja dan hilang saat Anda keluar.",
        "signin_key": "Kunci API", "signin_submit": "Masuk", "signin_bad": "Kunci tidak berlaku (tidak dikenal, "
                                                                         "dicabut, atau salah ketik).",
        "ask_title": "Ajukan pertanyaan", "question": "Pertanyaan", "question_help": "Bahasa Indonesia atau "
                                                                                     "Inggris; paling banyak {n} karakter.",
        "collection": "Koleksi", "ask_submit": "Tanya", "asking": "Sedang mencari bukti…",
        "answer_title": "Jawaban", "refusal_title": "Tidak dapat dijawab", "claims": "Klaim yang didukung",
        "unsupported": "Klaim yang tidak didukung (tidak dipakai sebagai jawaban)", "conflicts": "Sumber yang bertentangan",
        "ambiguous": "Lebih dari satu peraturan menjawab pertanyaan ini",
        "missing": "Kategori bukti yang tidak ditemukan", "nearest": "Sumber terdekat yang ditemukan",
        "score": "skor", "confidence": "keyakinan", "parts_of_confidence": "Susunan keyakinan",
        "judge": "penilai", "retrieval": "pencarian", "generator": "pembaca",
        "weights": "bobot", "raw": "nilai mentah", "cap": "batas", "no_verdict": "tanpa putusan",
        "citations": "Kutipan", "open_source": "Buka sumber", "example": "CONTOH/ILUSTRASI — bukan ketentuan",
        "not_in_corpus": "Dokumen yang disebut tetapi tidak ada di korpus", "retried": "setelah satu kali kueri ulang",
        "trace": "Jejak jawaban ini", "ask_again": "Pertanyaan baru", "verdict": "putusan",
        "review": "Tinjauan", "accept": "Terima", "reject": "Tolak", "flag": "Tandai", "reason": "Alasan penolakan",
        "note": "Catatan (opsional)", "reviewed": "Ditinjau", "by": "oleh", "choose_reason": "— pilih alasan —",
        "review_saved": "Tinjauan disimpan.", "reason_required": "Penolakan memerlukan alasan.",
        "part": "Bagian", "page": "hlm.", "pages": "hlm.", "download": "Unduh berkas asli",
        "document": "Dokumen", "path": "Letak", "quote": "Kutipan", "quote_not_located": "Kutipan tidak ditemukan "
                    "persis di teks ini; seluruh bagian yang dikutip disorot.",
        "xref_unresolved": "rujukan tidak terselesaikan", "back_to_answer": "Kembali ke jawaban",
        "outline": "Kerangka", "no_text": "Teks dokumen ini tidak dapat dibaca.",
        "error_title": "Tidak dapat diproses", "not_found": "Tidak ditemukan",
        "authority": "otoritas", "published": "terbit", "effective": "berlaku", "version": "versi",
        "number": "nomor", "export_md": "Unduh untuk kertas kerja (Markdown)",
        "export_docx": "Unduh untuk kertas kerja (DOCX)",
        # trace and corpus views (serve/web/trace_view.py, corpus_view.py)
        "trace_title": "Jejak jawaban", "created": "dibuat", "profile": "profil",
        "components": "komponen", "answer_lang": "bahasa jawaban", "question_lang": "bahasa pertanyaan",
        "analysis": "Analisis pertanyaan dan rute", "topic": "topik", "route": "rute",
        "required_categories": "kategori bukti wajib", "authority_weight": "bobot otoritas",
        "freshness_weight": "bobot kebaruan", "examples_satisfy": "contoh memenuhi",
        "named_documents": "dokumen yang disebut",
        "scoped_to": "pencarian dibatasi pada", "attempt": "Percobaan", "corrective_retry": "kueri ulang korektif",
        "query_plan": "Rencana kueri", "query_text": "kueri", "rewrite": "penulisan ulang",
        "normalised": "dinormalkan", "dense_text": "teks jalur dense", "lexical_tokens": "token leksikal",
        "terms": "Istilah", "term": "istilah", "weight": "bobot", "alternatives": "alternatif",
        "expansions": "perluasan",
        "candidates": "Kandidat per jalur pencarian", "lane_dense": "Jalur dense (vektor)",
        "lane_lexical": "Jalur leksikal (BM25)", "lane_sparse": "Jalur sparse (bobot leksikal)",
        "rank": "peringkat", "rrf": "RRF", "status": "status", "dropped": "dibuang",
        "unranked": "tidak ada di hasil jalur ini; skornya dihitung sesudahnya untuk perbandingan",
        "near_duplicate_of": "hampir sama dengan", "referenced_from": "dirujuk dari",
        "in_context": "dibaca pembangkit", "no_candidates": "Jalur ini tidak mengembalikan kandidat.",
        "referenced_chunks": "Ditambahkan karena dirujuk (tidak diperingkat ulang)",
        "rerank": "Campuran pemeringkatan ulang", "rerank_score": "skor akhir",
        "generator_output": "Keluaran mentah pembangkit", "generator_read": "Konteks yang dibaca pembangkit",
        "n_items": "butir", "model": "model", "finish_reason": "alasan berhenti",
        "context_cut": "dipotong dari konteks",
        "reader_sentences": "Calon jawaban yang dinilai pembaca",
        "unit_kinds": {"sentence": "kalimat", "item": "pengantar + butir", "enumeration": "seluruh daftar", "ayat": "ayat",
                       "pasal": "pasal"}, "coverage": "cakupan", "probability": "peluang",
        "claimed": "diklaim", "failure": "Kegagalan", "no_output": "Pembangkit tidak menghasilkan keluaran.",
        "gates": "Putusan gerbang per klaim", "quote_gate": "gerbang kutipan", "passed": "lolos", "failed": "gagal",
        "figures": "angka", "self_score": "skor-diri pembangkit", "no_claims": "Tidak ada klaim.",
        "judge_calls": "Panggilan penilai", "premise": "premis (sha256)",
        "sufficiency": "Kecukupan bukti", "required": "wajib", "satisfied": "terpenuhi oleh", "missing_short": "kurang",
        "attempt_ok": "percobaan ini menjawab bagiannya", "yes": "ya", "no": "tidak",
        "part_outcome": "keputusan bagian", "answered": "terjawab", "attempt_used": "percobaan yang dipakai",
        "decision": "Keputusan", "outcome": "hasil", "reason_code": "kode alasan", "why": "mengapa",
        "timings": "Waktu (ms)", "settings": "Pengaturan verifikasi", "none": "Tidak ada.",
        "status_supported": "didukung", "status_unsupported": "tidak didukung",
        "replay": "Putar ulang", "replay_help": "Putar ulang menjalankan gerbang dan keputusan versi hari ini atas "
                                               "keluaran pembangkit yang terekam (tanpa pencarian, tanpa model).",
        "replay_same": "Sama: gerbang hari ini mencapai keputusan yang sama.",
        "replay_differs": "Berbeda: gerbang hari ini mencapai keputusan lain.",
        "recorded": "terekam", "replayed": "diputar ulang", "differences": "Perbedaan",
        "corpus_title": "Korpus", "corpus_counts": "{documents} dokumen, {chunks} potongan",
        "not_ready": "Indeks koleksi ini belum siap", "show": "Tampilkan", "citation_name": "Nama kutipan",
        "doc_type": "jenis", "dates": "tanggal", "chunks": "potongan", "pasal": "Pasal",
        "ocr_pages": "halaman perlu OCR", "unresolved_refs": "rujukan tak terselesaikan",
        "near_dups": "hampir sama dengan", "no_documents": "Koleksi ini belum berisi dokumen.",
        "upload_title": "Unggah berkas",
        "upload_help": "Markdown, teks, HTML, PDF atau DOCX (boleh dengan front matter YAML); paling banyak {files} "
                       "berkas, {mb} MB seluruhnya. Otoritas unggahan paling tinggi otoritas kunci Anda ({authority}).",
        "upload_files": "Berkas", "upload_submit": "Unggah", "upload_result": "Hasil unggahan",
        "ingested": "dimasukkan", "unchanged": "tidak berubah", "skipped": "dilewati",
        "needs_ocr": "perlu OCR (tidak dibaca)",
        "corpus_now": "Korpus kini berisi {documents} dokumen, {chunks} potongan.",
        "metadata": "Metadata", "field": "kolom", "value": "nilai", "metadata_source": "asal",
        "sources": {"document": "dokumen itu sendiri", "declared": "dinyatakan (front matter)",
                    "sidecar": "berkas pendamping", "filename": "nama berkas"},
        "full_text": "Teks lengkap", "refs_out": "Rujukan keluar", "refs_in": "Dirujuk oleh",
        "resolved": "terselesaikan", "refs_summary": "{resolved} terselesaikan, {unresolved} tidak terselesaikan",
        "near_duplicates": "Bagian yang hampir sama di dokumen lain", "passages": "bagian",
        "ocr_section": "Halaman tanpa lapisan teks (perlu OCR, tidak dibaca)", "ingested_at": "dimasukkan",
        "uploaded_by": "diunggah oleh", "spans": "ayat/huruf/angka", "categories": "kategori",
        "context": "konteks", "claim": "klaim", "declared": "dinyatakan",
        "reference": "rujukan", "target": "menuju",
        "document_facts": "versi {version}, {chunks} potongan, {pasal} Pasal",
        "outcomes": {"answer": "jawaban", "refusal": "penolakan"},
        "upload_mark": "unggahan kunci",
        "trace_verified": "Jejak ini sama dengan yang dicatat log audit (entri {seq}, {at}).",
        "trace_unrecorded": "Jejak ini tidak tercatat di log audit: tidak dapat diverifikasi.",
        "collections": "Koleksi yang dapat Anda tanyai", "illustrative": "contoh fiktif",
        "no_description": "Belum ada deskripsi (saksi ingest --description).", "examples": "Contoh pertanyaan",
        "recent": "Pertanyaan terakhir Anda",
        "rerank_parts": {"coverage": "cakupan istilah", "dense": "kemiripan dense", "fused": "RRF gabungan",
                         "authority": "otoritas", "freshness": "kebaruan", "cross_encoder": "cross-encoder"},
        "roles": {"embedder": "embedder", "reranker": "pemeringkat ulang", "generator": "pembangkit",
                  "judge": "penilai", "reader": "pembaca"},
        "error_detail": "rincian",
        "errors": {
            "not_found": "Yang diminta tidak ada di koleksi ini.",
            "unknown_collection": "Koleksi itu tidak ada.",
            "forbidden": "Kunci Anda tidak boleh melakukan ini.",
            "unauthorized": "Kunci tidak berlaku atau tidak ada.",
            "invalid_request": "Permintaan ini tidak dapat diproses seperti adanya.",
            "invalid_review": "Tinjauan ini tidak dapat disimpan.",
            "unreadable_trace": "Jejak jawaban ini tidak dapat dibaca.",
            "unreplayable_trace": "Jejak jawaban ini tidak dapat diputar ulang.",
            "too_large": "Kiriman terlalu besar.",
            "rate_limited": "Terlalu banyak permintaan; coba lagi sebentar lagi.",
            "overloaded": "Layanan sedang penuh; coba lagi sebentar lagi.",
            "unavailable": "Layanan belum siap; coba lagi sebentar lagi.",
            "question_too_long": "Pertanyaan terlalu panjang.",
            "trace_altered": "Jejak jawaban ini diubah setelah jawabannya diberikan; tidak ditampilkan.",
        },
        "doc_types": {"regulation": "peraturan", "standard": "standar", "guidance": "pedoman", "law": "undang-undang",
                      "ruling": "putusan", "circular": "surat edaran", "other": "lainnya"},
        "reasons": {
            "quote_not_found": "kutipan tidak ditemukan persis di sumbernya",
            "citation_not_retrieved": "mengutip sumber yang tidak diambil untuk pertanyaan ini",
            "quote_is_instruction": "kutipan berisi instruksi, bukan ketentuan",
            "number_without_basis": "angka tanpa dasar di kutipan",
            "judge_contradicted": "penilai: kutipan bertentangan dengan klaim",
            "judge_not_entailed": "penilai: kutipan tidak mendukung klaim",
            "judge_below_threshold": "penilai: dukungan di bawah ambang",
            "confidence_below_minimum": "keyakinan di bawah batas minimum",
        },
    },
    "en": {
        "app": "saksi", "tagline": "Answers with exact quotes, or a refusal that names what is missing.",
        "nav_ask": "Ask", "nav_corpus": "Corpus", "signout": "Sign out", "signed_in_as": "Signed in as",
        "lang_toggle": "Bahasa Indonesia", "skip": "Skip to content",
        "signin_title": "Sign in", "signin_help": "Paste your API key (from `saksi keys create`). It is kept in "
                                                  "this browser's cookie only, and dropped when you sign out.",
        "signin_key": "API key", "signin_submit": "Sign in", "signin_bad": "The key is not valid (unknown, revoked "
                                                                           "or mistyped).",
        "ask_title": "Ask a question", "question": "Question", "question_help": "Indonesian or English; at most "
                                                                                "{n} characters.",
        "collection": "Collection", "ask_submit": "Ask", "asking": "Looking for evidence…",
        "answer_title": "Answer", "refusal_title": "No answer", "claims": "Supported claims",
        "unsupported": "Claims not supported (not used as an answer)", "conflicts": "Records that disagree",
        "ambiguous": "More than one regulation answers this question",
        "missing": "Evidence categories not found", "nearest": "Nearest records found",
        "score": "score", "confidence": "confidence", "parts_of_confidence": "How the confidence is made",
        "judge": "judge", "retrieval": "retrieval", "generator": "reader",
        "weights": "weights", "raw": "raw value", "cap": "cap", "no_verdict": "no verdict",
        "citations": "Citations", "open_source": "Open the source", "example": "EXAMPLE/ILLUSTRATION — not a requirement",
        "not_in_corpus": "Documents named but not in the corpus", "retried": "after one query rewrite",
        "trace": "This answer's trace", "ask_again": "New question", "verdict": "verdict",
        "review": "Review", "accept": "Accept", "reject": "Reject", "flag": "Flag", "reason": "Reason for rejecting",
        "note": "Note (optional)", "reviewed": "Reviewed", "by": "by", "choose_reason": "— choose a reason —",
        "review_saved": "Review saved.", "reason_required": "A rejection needs a reason.",
        "part": "Part", "page": "p.", "pages": "pp.", "download": "Download the original file",
        "document": "Document", "path": "Where", "quote": "Quote", "quote_not_located": "The quote was not found "
                    "verbatim in this text; the whole cited passage is highlighted.",
        "xref_unresolved": "unresolved reference", "back_to_answer": "Back to the answer",
        "outline": "Outline", "no_text": "This document's text cannot be read.",
        "error_title": "Cannot be done", "not_found": "Not found",
        "authority": "authority", "published": "published", "effective": "in force", "version": "version",
        "number": "number", "export_md": "Download for a working paper (Markdown)",
        "export_docx": "Download for a working paper (DOCX)",
        # trace and corpus views (serve/web/trace_view.py, corpus_view.py)
        "trace_title": "Answer trace", "created": "created", "profile": "profile",
        "components": "components", "answer_lang": "answer language", "question_lang": "question language",
        "analysis": "Question analysis and routes", "topic": "topic", "route": "route",
        "required_categories": "required evidence categories", "authority_weight": "authority weight",
        "freshness_weight": "freshness weight", "examples_satisfy": "examples satisfy",
        "named_documents": "documents named",
        "scoped_to": "retrieval limited to", "attempt": "Attempt", "corrective_retry": "corrective retry",
        "query_plan": "Query plan", "query_text": "query", "rewrite": "rewrite",
        "normalised": "normalised", "dense_text": "dense lane text", "lexical_tokens": "lexical tokens",
        "terms": "Terms", "term": "term", "weight": "weight", "alternatives": "alternatives",
        "expansions": "expansions",
        "candidates": "Candidates per retrieval lane", "lane_dense": "Dense lane (vectors)",
        "lane_lexical": "Lexical lane (BM25)", "lane_sparse": "Sparse lane (lexical weights)",
        "rank": "rank", "rrf": "RRF", "status": "status", "dropped": "dropped",
        "unranked": "not among this lane's hits; scored afterwards for comparison",
        "near_duplicate_of": "near-duplicate of", "referenced_from": "referenced from",
        "in_context": "read by the generator", "no_candidates": "This lane returned no candidates.",
        "referenced_chunks": "Added because referenced (not reranked)",
        "rerank": "Rerank blend", "rerank_score": "rerank score",
        "generator_output": "The generator's raw output", "generator_read": "Context the generator read",
        "n_items": "items", "model": "model", "finish_reason": "finish reason", "context_cut": "cut from the context",
        "reader_sentences": "Candidate answers the reader scored",
        "unit_kinds": {"sentence": "sentence", "item": "lead-in + item", "enumeration": "whole list", "ayat": "ayat",
                       "pasal": "Pasal"}, "coverage": "coverage", "probability": "probability",
        "claimed": "claimed", "failure": "Failure", "no_output": "The generator produced no output.",
        "gates": "Each gate's decision per claim", "quote_gate": "quote gate", "passed": "passed", "failed": "failed",
        "figures": "figures", "self_score": "generator self-score", "no_claims": "No claims.",
        "judge_calls": "Judge calls", "premise": "premise (sha256)",
        "sufficiency": "Evidence sufficiency", "required": "required", "satisfied": "satisfied by",
        "missing_short": "missing",
        "attempt_ok": "this attempt answers its part", "yes": "yes", "no": "no",
        "part_outcome": "part decision", "answered": "answered", "attempt_used": "attempt used",
        "decision": "Decision", "outcome": "outcome", "reason_code": "reason code", "why": "why",
        "timings": "Timings (ms)", "settings": "Verification settings", "none": "None.",
        "status_supported": "supported", "status_unsupported": "not supported",
        "replay": "Replay", "replay_help": "Replay re-runs today's gates and decision on the recorded generator "
                                           "output (no retrieval, no model).",
        "replay_same": "Same: today's gates reach the same decision.",
        "replay_differs": "Different: today's gates reach another decision.",
        "recorded": "recorded", "replayed": "replayed", "differences": "Differences",
        "corpus_title": "Corpus", "corpus_counts": "{documents} documents, {chunks} passages",
        "not_ready": "This collection's index is not ready", "show": "Show", "citation_name": "Citation name",
        "doc_type": "type", "dates": "dates", "chunks": "passages", "pasal": "Pasal",
        "ocr_pages": "pages needing OCR", "unresolved_refs": "unresolved references",
        "near_dups": "near-duplicates", "no_documents": "This collection holds no documents yet.",
        "upload_title": "Upload files",
        "upload_help": "Markdown, text, HTML, PDF or DOCX (YAML front matter allowed); at most {files} files, {mb} MB "
                       "in all. An upload's authority is at most your key's ({authority}).",
        "upload_files": "Files", "upload_submit": "Upload", "upload_result": "Upload result",
        "ingested": "ingested", "unchanged": "unchanged", "skipped": "skipped",
        "needs_ocr": "needs OCR (not read)",
        "corpus_now": "The corpus now holds {documents} documents, {chunks} passages.",
        "metadata": "Metadata", "field": "field", "value": "value", "metadata_source": "from",
        "sources": {"document": "the document itself", "declared": "declared (front matter)",
                    "sidecar": "sidecar file", "filename": "file name"},
        "full_text": "Full text", "refs_out": "References out", "refs_in": "Referenced by",
        "resolved": "resolved", "refs_summary": "{resolved} resolved, {unresolved} unresolved",
        "near_duplicates": "Near-duplicate passages in other documents", "passages": "passages",
        "ocr_section": "Pages without a text layer (need OCR, not read)", "ingested_at": "ingested",
        "uploaded_by": "uploaded by", "spans": "ayat/huruf/angka", "categories": "categories",
        "context": "context", "claim": "claim", "declared": "declared",
        "reference": "reference", "target": "points to",
        "document_facts": "version {version}, {chunks} passages, {pasal} Pasal",
        "outcomes": {"answer": "answer", "refusal": "refusal"},
        "upload_mark": "uploaded by key",
        "trace_verified": "This trace is the one the audit log recorded (entry {seq}, {at}).",
        "trace_unrecorded": "This trace is not recorded in the audit log: it cannot be verified.",
        "collections": "Collections you may ask", "illustrative": "fictional example",
        "no_description": "No description yet (saksi ingest --description).", "examples": "Example questions",
        "recent": "Your latest questions",
        "rerank_parts": {"coverage": "term coverage", "dense": "dense similarity", "fused": "fused RRF",
                         "authority": "authority", "freshness": "freshness", "cross_encoder": "cross-encoder"},
        "roles": {"embedder": "embedder", "reranker": "reranker", "generator": "generator", "judge": "judge",
                  "reader": "reader"},
        "error_detail": "detail",
        "errors": {
            "not_found": "What was asked for is not in this collection.",
            "unknown_collection": "That collection does not exist.",
            "forbidden": "Your key may not do this.",
            "unauthorized": "The key is not valid, or there is none.",
            "invalid_request": "This request cannot be processed as it is.",
            "invalid_review": "This review cannot be saved.",
            "unreadable_trace": "This answer's trace cannot be read.",
            "unreplayable_trace": "This answer's trace cannot be replayed.",
            "too_large": "What was sent is too large.",
            "rate_limited": "Too many requests; try again in a moment.",
            "overloaded": "The service is full; try again in a moment.",
            "unavailable": "The service is not ready yet; try again in a moment.",
            "question_too_long": "The question is too long.",
            "trace_altered": "This answer's trace was changed after the answer was given; it is not shown.",
        },
        "doc_types": {"regulation": "regulation", "standard": "standard", "guidance": "guidance", "law": "law",
                      "ruling": "ruling", "circular": "circular", "other": "other"},
        "reasons": {
            "quote_not_found": "the quote is not found verbatim in the record",
            "citation_not_retrieved": "cites a record not retrieved for this question",
            "quote_is_instruction": "the quote is an instruction, not a provision",
            "number_without_basis": "a number with no basis in its quotes",
            "judge_contradicted": "judge: the quote contradicts the claim",
            "judge_not_entailed": "judge: the quote does not support the claim",
            "judge_below_threshold": "judge: support below the threshold",
            "confidence_below_minimum": "confidence below the minimum",
        },
    },
}


def labels(lang: str) -> dict:
    """Every label of the page in `lang` (id or en), with the answer's labels under `answer`."""
    lang = lang if lang in LANGS else "id"
    other = "en" if lang == "id" else "id"
    return {**WEB[other], **WEB[lang], "answer": ANSWER_LABELS[lang], "lang": lang}


def reason_words(reason: str, lang: str) -> str:
    """A demoted claim's reason ("judge_below_threshold: 0.412 < 0.5") in words, its detail kept."""
    code, _, detail = reason.partition(":")
    words = WEB[lang if lang in LANGS else "id"]["reasons"].get(code.strip())
    if words is None:
        return reason
    return f"{words} ({detail.strip()})" if detail.strip() else words


# What the pipeline writes into a trace as a note (a candidate dropped, a query rewritten, a judge's verdict) is
# recorded in English; the trace page says each in the page's language. A note no pattern knows is shown as it is.
_NOTES: tuple[tuple[re.Pattern, str], ...] = tuple((re.compile(pattern), words) for pattern, words in (
    (r"per-source cap \((\d+)\) for (\S+)", "batas per sumber ({0}) untuk {1}"),
    (r"near-duplicate of (\S+)", "hampir sama dengan {0}"),
    (r"outside the document\(s\) the question names", "di luar dokumen yang disebut pertanyaan"),
    (r"keywords and glossary expansions, wider retrieval", "kata kunci dan perluasan glosarium, pencarian lebih luas"),
    (r"rewritten by (\S+): (.*), wider retrieval", "ditulis ulang oleh {0}: {1}, pencarian lebih luas"),
    (r"claim appears verbatim in the cited paragraph", "klaim tertulis kata demi kata di paragraf yang dikutip"),
    (r"each piece of the claim appears verbatim in the cited paragraph, in order; only whole items of its "
     r"enumeration are left out between them",
     "setiap potongan klaim tertulis kata demi kata di paragraf yang dikutip, berurutan; di antaranya hanya butir "
     "utuh daftarnya yang dilewati"),
    (r"the paragraph says the opposite: (.*)", "paragraf menyatakan kebalikannya: {0}"),
    (r"not verbatim; the lite judge has no model to decide",
     "tidak kata demi kata; penilai lite tidak punya model untuk memutuskan"),
    (r"judge unavailable: (.*)", "penilai tidak tersedia: {0}"),
    (r"no recorded verdict for this claim and paragraph", "tidak ada putusan terekam untuk klaim dan paragraf ini"),
    (r"document not in the corpus: (.*)", "dokumen tidak ada di korpus: {0}"),
    (r"no (.+) in (\S+)", "tidak ada {0} di {1}"),
))


def note_words(note: str, lang: str) -> str:
    """A note the trace recorded (in English), in `lang`."""
    if lang != "id":
        return note
    for pattern, words in _NOTES:
        if m := pattern.fullmatch(note):
            return words.format(*m.groups())
    return note
