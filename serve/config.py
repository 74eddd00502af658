"""Per-profile Ray Serve options (configs/serve/<profile>.yaml), validated like every config.

One file says, for each deployment, its replicas or autoscaling, `max_ongoing_requests`,
actor resources and (for the batched models) batch size and wait; the application builder
and the generated KubeRay `serveConfigV2` both read it, so they cannot drift apart.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import Field, model_validator

from pipeline.config import StrictConfig as _Strict
from pipeline.config import config_dir, load_config_file
from pipeline.errors import ConfigError

DEPLOYMENTS = ("Ingress", "Retriever", "Embedder", "Reranker", "Generator", "Judge")
BATCHED = ("Embedder", "Reranker", "Judge")


class Autoscaling(_Strict):
    min_replicas: int = Field(1, ge=0)
    max_replicas: int = Field(1, ge=1)
    target_ongoing_requests: float = Field(4, gt=0)

    @model_validator(mode="after")
    def _order(self) -> "Autoscaling":
        if self.min_replicas > self.max_replicas:
            raise ValueError("min_replicas must not exceed max_replicas")
        return self


class ActorOptions(_Strict):
    num_cpus: float = Field(1, ge=0)
    num_gpus: float = Field(0, ge=0)
    memory: int | None = Field(None, ge=0)
    runtime_env: dict[str, Any] | None = Field(
        None, description="Ray runtime_env for this deployment only (e.g. the generator's vLLM, whose transformers "
                          "pin conflicts with FlagEmbedding's)")


class Batch(_Strict):
    max_batch_size: int = Field(16, ge=1)
    batch_wait_timeout_s: float = Field(0.005, ge=0)


class DeploymentOptions(_Strict):
    num_replicas: int | None = Field(None, ge=1)
    autoscaling_config: Autoscaling | None = None
    max_ongoing_requests: int = Field(32, ge=1)
    ray_actor_options: ActorOptions = ActorOptions()
    batch: Batch | None = None

    @model_validator(mode="after")
    def _one_scaling(self) -> "DeploymentOptions":
        if (self.num_replicas is None) == (self.autoscaling_config is None):
            raise ValueError("give exactly one of num_replicas or autoscaling_config")
        return self

    def serve_options(self) -> dict[str, Any]:
        """Keyword arguments for `Deployment.options` (and serveConfigV2's deployment entries)."""
        out: dict[str, Any] = {"max_ongoing_requests": self.max_ongoing_requests,
                               "ray_actor_options": self.ray_actor_options.model_dump(exclude_none=True)}
        if self.num_replicas is not None:
            out["num_replicas"] = self.num_replicas
        else:
            out["autoscaling_config"] = self.autoscaling_config.model_dump()
        return out


class IngressSettings(_Strict):
    request_timeout_s: float = Field(30, gt=0)
    max_in_flight: int = Field(64, ge=1)
    retry_after_s: int = Field(2, ge=1)
    max_upload_bytes: int = Field(2_000_000, ge=1)


class Application(_Strict):
    name: str = "saksi"
    route_prefix: str = "/"


class ServeConfig(_Strict):
    profile: str
    application: Application = Application()
    ingress: IngressSettings = IngressSettings()
    deployments: dict[str, DeploymentOptions]

    @model_validator(mode="after")
    def _known(self) -> "ServeConfig":
        unknown = set(self.deployments) - set(DEPLOYMENTS)
        missing = set(DEPLOYMENTS) - set(self.deployments)
        if unknown or missing:
            raise ValueError(f"deployments must be exactly {', '.join(DEPLOYMENTS)} "
                             f"(unknown: {sorted(unknown)}, missing: {sorted(missing)})")
        for name in BATCHED:
            if self.deployments[name].batch is None:
                raise ValueError(f"{name} is batched: give it batch.max_batch_size and batch.batch_wait_timeout_s")
        retr = self.deployments["Retriever"]
        if self.profile == "lite" and retr.num_replicas != 1:
            raise ValueError("in the lite profile exactly one Retriever replica owns the Milvus Lite file")
        return self


def load_serve_config(profile: str, directory: str | Path | None = None) -> ServeConfig:
    path = Path(directory or config_dir()) / "serve" / f"{profile}.yaml"
    if not path.exists():
        raise ConfigError(f"no Ray Serve options for profile {profile!r} at {path}")
    return load_config_file(ServeConfig, path)
