"""Tiny random-init models of the production architectures, built offline from a config.

Each builder writes a directory shaped like the real model's (config.json, weights,
tokenizer files; BGE-M3's extra `colbert_linear.pt` and `sparse_linear.pt` heads), so
the backends load them through exactly the code path users run. The weights are random:
these models test loading, shapes, label mapping, windowing and plumbing — not quality.
"""
from __future__ import annotations

import json
from pathlib import Path

# a small word-level vocabulary over the kind of text the tests use (Indonesian + English)
_TEXT = """
pajak penghasilan tarif persen wajib pajak badan orang pribadi pasal ayat huruf angka peraturan menteri keuangan
nomor tahun tentang penyerahan barang jasa kena pajak pertambahan nilai sewa tanah bangunan final pemotongan
dipotong disetor paling lambat tanggal bulan berikutnya sanksi denda administrasi bunga laporan keuangan aset
liabilitas pendapatan diakui diukur nilai wajar biaya perolehan contoh ilustrasi entitas kontrak pelanggan
tax income rate percent taxpayer corporate individual article regulation minister finance number year about
delivery goods services value added rent land building withheld paid by the 15th of the following month penalty
fine interest financial statements asset liability revenue recognised measured fair value cost example entity
contract customer is are was not no tidak bukan adalah sebesar dari atas yang dan atau untuk dengan pada dalam
ini itu oleh ke di the a an of for to in on and or with by what how when berapa apa kapan bagaimana
"""
SPECIAL_XLMR = ["<s>", "<pad>", "</s>", "<unk>", "<mask>"]
SPECIAL_BERT = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]


def _vocab(specials: list[str]) -> dict[str, int]:
    words = sorted({w for w in _TEXT.split()} | set("0123456789.,:;()%-/"))
    return {t: i for i, t in enumerate([*specials, *words])}


def build_tokenizer(style: str = "xlmr"):
    """A fast word-level tokenizer with the special tokens of `style` ('xlmr' or 'bert')."""
    from tokenizers import Tokenizer, normalizers, pre_tokenizers, processors
    from tokenizers.models import WordLevel
    from transformers import PreTrainedTokenizerFast

    specials = SPECIAL_XLMR if style == "xlmr" else SPECIAL_BERT
    vocab = _vocab(specials)
    unk = "<unk>" if style == "xlmr" else "[UNK]"
    tok = Tokenizer(WordLevel(vocab, unk_token=unk))
    tok.normalizer = normalizers.Sequence([normalizers.NFKC(), normalizers.Lowercase()])
    tok.pre_tokenizer = pre_tokenizers.Sequence([pre_tokenizers.Whitespace(), pre_tokenizers.Digits(True)])
    if style == "xlmr":
        bos, eos, pad, mask = "<s>", "</s>", "<pad>", "<mask>"
        tok.post_processor = processors.TemplateProcessing(
            single="<s> $A </s>", pair="<s> $A </s> </s> $B </s>",
            special_tokens=[("<s>", vocab["<s>"]), ("</s>", vocab["</s>"])])
        return PreTrainedTokenizerFast(tokenizer_object=tok, bos_token=bos, eos_token=eos, cls_token=bos,
                                       sep_token=eos, pad_token=pad, unk_token=unk, mask_token=mask,
                                       model_max_length=512)
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B:1 [SEP]:1",
        special_tokens=[("[CLS]", vocab["[CLS]"]), ("[SEP]", vocab["[SEP]"])])
    return PreTrainedTokenizerFast(tokenizer_object=tok, cls_token="[CLS]", sep_token="[SEP]", pad_token="[PAD]",
                                   unk_token=unk, mask_token="[MASK]", model_max_length=512)


def _xlmr_config(vocab_size: int, **extra):
    from transformers import XLMRobertaConfig

    return XLMRobertaConfig(vocab_size=vocab_size, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                            intermediate_size=64, max_position_embeddings=130, pad_token_id=1, bos_token_id=0,
                            eos_token_id=2, type_vocab_size=1, **extra)


def build_bge_m3(path: Path) -> Path:
    """XLM-RoBERTa encoder + the colbert and sparse heads FlagEmbedding's BGE-M3 loader reads."""
    import torch
    from transformers import XLMRobertaModel

    torch.manual_seed(0)
    tok = build_tokenizer("xlmr")
    model = XLMRobertaModel(_xlmr_config(len(tok)))
    model.save_pretrained(path)
    tok.save_pretrained(path)
    hidden = model.config.hidden_size
    torch.save(torch.nn.Linear(hidden, hidden).state_dict(), path / "colbert_linear.pt")
    sparse = torch.nn.Linear(hidden, 1)
    torch.nn.init.uniform_(sparse.weight, 0.0, 0.5)  # mostly positive token weights, so the sparse lane has hits
    torch.nn.init.constant_(sparse.bias, 0.1)
    torch.save(sparse.state_dict(), path / "sparse_linear.pt")
    return path


def build_cross_encoder(path: Path) -> Path:
    """An XLM-RoBERTa sequence classifier with one logit, like bge-reranker-v2-m3."""
    import torch
    from transformers import XLMRobertaForSequenceClassification

    torch.manual_seed(1)
    tok = build_tokenizer("xlmr")
    model = XLMRobertaForSequenceClassification(_xlmr_config(len(tok), num_labels=1))
    model.save_pretrained(path)
    tok.save_pretrained(path)
    return path


# deliberately not the usual entailment/neutral/contradiction index order
JUDGE_LABELS = {0: "contradiction", 1: "entailment", 2: "neutral"}


def build_nli(path: Path, id2label: dict[int, str] | None = None, max_positions: int = 64) -> Path:
    """A DeBERTa-v2 three-way classifier (mDeBERTa's architecture) with a short position limit,
    so paragraphs longer than the model can read exercise the judge's windowing."""
    import torch
    from transformers import DebertaV2Config, DebertaV2ForSequenceClassification

    torch.manual_seed(2)
    tok = build_tokenizer("bert")
    tok.model_max_length = max_positions
    labels = id2label or JUDGE_LABELS
    cfg = DebertaV2Config(vocab_size=len(tok), hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                          intermediate_size=64, max_position_embeddings=max_positions, relative_attention=True,
                          position_buckets=16, pos_att_type=["p2c", "c2p"], position_biased_input=False,
                          type_vocab_size=0, pad_token_id=0, num_labels=len(labels),
                          id2label={int(k): v for k, v in labels.items()},
                          label2id={v: int(k) for k, v in labels.items()})
    model = DebertaV2ForSequenceClassification(cfg)
    model.save_pretrained(path)
    tok.save_pretrained(path)
    return path


CHAT_TEMPLATE = ("{% for m in messages %}<s> {{ m['role'] }} : {{ m['content'] }} </s> {% endfor %}"
                 "{% if add_generation_prompt %}<s> assistant : {% endif %}")


def build_causal_lm(path: Path, arch: str = "qwen2") -> Path:
    """A tiny Qwen2 (or Llama) causal LM with a chat template."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM, Qwen2Config, Qwen2ForCausalLM

    torch.manual_seed(3)
    tok = build_tokenizer("xlmr")
    tok.chat_template = CHAT_TEMPLATE
    tok.model_max_length = 4096
    common = dict(vocab_size=len(tok), hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                  num_attention_heads=2, num_key_value_heads=1, max_position_embeddings=4096,
                  bos_token_id=tok.bos_token_id, eos_token_id=tok.eos_token_id, pad_token_id=tok.pad_token_id,
                  tie_word_embeddings=True)
    model = Qwen2ForCausalLM(Qwen2Config(**common)) if arch == "qwen2" else LlamaForCausalLM(LlamaConfig(**common))
    model.save_pretrained(path)
    tok.save_pretrained(path)
    return path


def write_json(path: Path, data: dict) -> None:
    path.write_text(json.dumps(data), encoding="utf-8")
