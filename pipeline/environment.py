"""The `SAKSI_*` environment variables, read here and nowhere else.

| variable             | what it sets                                  | default                      |
|----------------------|-----------------------------------------------|------------------------------|
| `SAKSI_DATA_DIR`     | the data directory when `--data-dir` is absent | `data`                       |
| `SAKSI_CONFIG_DIR`   | where profiles and rule files are read from    | the repository's `configs/`  |
| `SAKSI_MILVUS_URI`   | a Milvus server, over `index.milvus_uri`       | Milvus Lite in the data dir  |
| `SAKSI_MILVUS_TOKEN` | that server's token                            | none                         |

Read on every call (not cached): a process that changes its environment, as tests do, sees it.
"""
from __future__ import annotations

import os
from pathlib import Path

DEFAULT_DATA_DIR = "data"
_REPO_CONFIGS = Path(__file__).resolve().parent.parent / "configs"


def _get(name: str) -> str | None:
    return os.environ.get(name) or None


def data_dir(arg: str | Path | None = None) -> Path:
    """--data-dir, else $SAKSI_DATA_DIR, else ./data."""
    return Path(arg or _get("SAKSI_DATA_DIR") or DEFAULT_DATA_DIR)


def config_dir() -> Path:
    """$SAKSI_CONFIG_DIR, else the repository's `configs/` beside the package."""
    env = _get("SAKSI_CONFIG_DIR")
    return Path(env) if env else _REPO_CONFIGS


def milvus_uri() -> str | None:
    """A Milvus server's address given by the environment (it overrides the profile's)."""
    return _get("SAKSI_MILVUS_URI")


def milvus_token() -> str | None:
    return _get("SAKSI_MILVUS_TOKEN")
