"""The saksi application: deployments bound together with the options of one profile.

`build_app(profile, data_dir)` is what `saksi serve` runs; `app_builder` is the import
path `serve run` / `serve deploy` and KubeRay's serveConfigV2 use:

    serve run serve.app:app_builder profile=lite data_dir=data/sample

(without `data_dir`: $SAKSI_DATA_DIR, else ./data, as every command).
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from ray.serve import Application, Deployment

from pipeline import environment
from pipeline.config import load_profile
from pipeline.corpus import DataDir

from .ingress import Ingress
from .config import BATCHED, ServeConfig, load_serve_config
from .deployments import (EmbedderDeployment, GeneratorDeployment, JudgeDeployment, RerankerDeployment,
                          RetrieverDeployment)

IMPORT_PATH = "serve.app:app_builder"


def build_app(profile: str = "lite", data_dir: str | Path | None = None, config: ServeConfig | None = None,
              overrides: dict[str, Deployment] | None = None) -> Application:
    """The application over `data_dir` (default: $SAKSI_DATA_DIR, else ./data). A model that
    `runtime.placement` runs inside its caller gets no deployment. `overrides` replaces model
    deployments by name ("Judge", "Generator", …): tests use it to take the judge away or slow the
    generator down, with test doubles (on a config that gives that model its deployment)."""
    overrides = overrides or {}
    cfg = config or load_serve_config(profile)
    d = cfg.deployments
    data_dir = environment.data_dir(data_dir).resolve()
    cfg.check_retrievers(DataDir(data_dir).milvus_uri(load_profile(profile).settings.index))

    def bound(name: str, default: Deployment):
        """The model's deployment, bound to the profile (and its batch), or None where
        runtime.placement runs the model inside its caller."""
        if name not in d:
            return None
        args = (profile, d[name].batch) if name in BATCHED else (profile,)
        return overrides.get(name, default).options(**d[name].serve_options()).bind(*args)

    embedder = bound("Embedder", EmbedderDeployment)
    reranker = bound("Reranker", RerankerDeployment)
    judge = bound("Judge", JudgeDeployment)
    generator = bound("Generator", GeneratorDeployment)
    retriever = RetrieverDeployment.options(**d["Retriever"].serve_options()).bind(
        profile, str(data_dir), cfg.runtime, embedder, reranker, d["Retriever"].batch)
    return Ingress.options(**d["Ingress"].serve_options()).bind(
        profile, str(data_dir), cfg.runtime, embedder, retriever, reranker, generator, judge)


def app_builder(args: dict[str, Any]) -> Application:
    """Application builder for `serve run serve.app:app_builder profile=… data_dir=…`."""
    return build_app(str(args.get("profile", "lite")), args.get("data_dir"))


def serve_config_v2(profile: str, data_dir: str, config: ServeConfig | None = None) -> dict:
    """A Ray Serve config (the `serve deploy` file, and KubeRay's serveConfigV2) from the same options."""
    cfg = config or load_serve_config(profile)
    deployments = []
    for name, opts in cfg.deployments.items():
        entry = {"name": name, **opts.serve_options()}
        deployments.append(entry)
    return {
        "proxy_location": "EveryNode",
        "http_options": {"host": "0.0.0.0", "port": 8000},
        "applications": [{
            "name": cfg.application.name, "route_prefix": cfg.application.route_prefix,
            "import_path": IMPORT_PATH, "args": {"profile": profile, "data_dir": data_dir},
            "deployments": deployments,
        }],
    }
