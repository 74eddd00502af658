"""Per-profile Ray Serve options (configs/serve/<profile>.yaml), validated like every config.

One file says, for each deployment, its replicas or autoscaling, `max_ongoing_requests`,
actor resources and (for the batched models) batch size and wait, and (`runtime`) every
deadline and limit the application applies; the application builder and the generated
KubeRay `serveConfigV2` both read it, so they cannot drift apart.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import Field, model_validator

from pipeline.config import StrictConfig as _Strict
from pipeline.config import load_config_file
from pipeline.environment import config_dir
from pipeline.errors import ConfigError
from pipeline.index import is_milvus_lite

DEPLOYMENTS = ("Ingress", "Retriever", "Embedder", "Reranker", "Generator", "Judge")
BATCHED = ("Embedder", "Reranker", "Judge")


class Autoscaling(_Strict):
    min_replicas: int = Field(1, ge=0)
    max_replicas: int = Field(1, ge=1)
    target_ongoing_requests: float = Field(4, gt=0)
    # how long the load must stay above / below target before Serve adds / removes a replica;
    # unset: Ray Serve's own defaults (30 s up, 600 s down)
    upscale_delay_s: float | None = Field(None, ge=0)
    downscale_delay_s: float | None = Field(None, ge=0)

    @model_validator(mode="after")
    def _order(self) -> "Autoscaling":
        if self.min_replicas > self.max_replicas:
            raise ValueError("min_replicas must not exceed max_replicas")
        return self


class ActorOptions(_Strict):
    num_cpus: float = Field(1, ge=0)
    num_gpus: float = Field(0, ge=0)
    memory: int | None = Field(None, ge=0)
    resources: dict[str, float] | None = Field(
        None, description="Ray custom resources (e.g. {gpu_large: 1}): pins a deployment to the worker group whose "
                          "rayStartParams advertise them (serve/k8s.py GPU_CLASSES)")
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
            out["autoscaling_config"] = self.autoscaling_config.model_dump(exclude_none=True)
        return out


class Placement(_Strict):
    """Where each model runs. In its own deployment, a model is loaded once, scaled on its own and
    batched across questions, and every call to it is a hop between processes (~5-8 ms on a laptop).
    Inside the deployment that calls it, the call costs nothing and the model is loaded there: the
    lite profile's small CPU models. The Embedder deployment stays either way: uploads' passages
    are embedded there."""

    query_embedder: Literal["retriever", "embedder"] = Field(
        "embedder", description="a question's embedding: inside the Retriever's context call (batched there with "
                                "the Retriever's `batch`) or by the Embedder deployment (a GPU model, loaded once)")
    reranker: Literal["retriever", "reranker"] = Field(
        "reranker", description="inside the Retriever's context call, or the Reranker deployment")
    generator: Literal["ingress", "generator"] = Field(
        "generator", description="inside the Ingress, beside the orchestrator, or the Generator deployment")
    judge: Literal["ingress", "judge"] = Field(
        "judge", description="inside the Ingress, beside the orchestrator, or the Judge deployment")

    def deployed(self) -> tuple[str, ...]:
        """The model deployments this placement needs (the Embedder always: uploads)."""
        own = {"Reranker": self.reranker == "reranker", "Generator": self.generator == "generator",
               "Judge": self.judge == "judge"}
        return ("Embedder", *(name for name, mine in own.items() if mine))


class RuntimeSettings(_Strict):
    """The served application's deadlines and limits: every timeout and cap the ingress and the
    retriever apply is here, none in the code."""

    request_timeout_s: float = Field(30, gt=0, description="a question still running after this is answered with "
                                                           "a refusal (reason: timeout)")
    max_in_flight: int = Field(64, ge=1, description="questions in progress at once; more get 503 with Retry-After")
    retry_after_s: int = Field(2, ge=1)
    max_upload_bytes: int = Field(2_000_000, ge=1, description="POST /v1/ingest is for small uploads")
    judge_timeout_s: float = Field(10, gt=0, description="a judge call past this is no verdict (the claim is capped "
                                                         "below the top band), never a yes; at most request_timeout_s")
    readiness_timeout_s: float = Field(5, gt=0, description="GET /readyz: each deployment's answer to ready()")
    corpus_timeout_s: float = Field(10, gt=0, description="GET /v1/corpus: the retriever's report")
    page_timeout_s: float = Field(10, gt=0, description="a page's or a read's own work (reading a trace, rebuilding "
                                                        "and rendering an answer, a document or its text), done in a "
                                                        "worker thread off the event loop; past it 503 timeout")
    ingest_embed_timeout_s: float = Field(600, gt=0, description="POST /v1/ingest: one batch of passages through "
                                                                 "the Embedder deployment")
    max_upload_chunks: int = Field(300, ge=1, description="POST /v1/ingest: citable passages one request may add "
                                                          "(each is embedded here); a file past it is skipped")
    parse_timeout_s: float = Field(20, gt=0, description="POST /v1/ingest: one file's parsing (in a worker process, "
                                                         "off the read path); past it the file is skipped")
    parse_memory_mb: int = Field(1024, ge=64, description="POST /v1/ingest: the most memory one file's parsing may "
                                                         "add to its worker process (RLIMIT_AS); past it the file is "
                                                         "skipped")
    rate_per_minute: float = Field(600, gt=0, description="requests one key may make per minute, sustained "
                                                          "(per ingress replica); past it 429 with Retry-After")
    rate_burst: int = Field(100, ge=1, description="requests one key may make at once before the rate applies")
    answer_units_per_minute: float = Field(30, gt=0, description="what one key's answers may cost per minute, "
                                                                 "sustained: one unit to be admitted, then one per "
                                                                 "second of the answer's measured work (30: half of one "
                                                                 "core's minute); past it 429 with Retry-After")
    answer_units_burst: float = Field(30, ge=1, description="what one key's answers may cost at once (seconds of "
                                                            "work); a costly answer leaves a debt the refill pays off")
    placement: Placement = Field(default_factory=Placement,
                                 description="where each model runs: its own deployment, or inside its caller")


class Application(_Strict):
    name: str = "saksi"
    route_prefix: str = "/"


class ServeConfig(_Strict):
    profile: str
    application: Application = Application()
    runtime: RuntimeSettings = RuntimeSettings()
    deployments: dict[str, DeploymentOptions]

    @model_validator(mode="after")
    def _known(self) -> "ServeConfig":
        expected = self.expected_deployments()
        unknown = set(self.deployments) - set(expected)
        missing = set(expected) - set(self.deployments)
        if unknown or missing:
            inside = [n for n in DEPLOYMENTS if n not in expected]
            raise ValueError(f"deployments must be exactly {', '.join(expected)} (unknown: {sorted(unknown)}, missing: "
                             f"{sorted(missing)})" + (f"; runtime.placement runs {', '.join(inside)} inside their "
                                                      "callers, so they have no deployment" if inside else ""))
        for name in BATCHED:
            if name in self.deployments and self.deployments[name].batch is None:
                raise ValueError(f"{name} is batched: give it batch.max_batch_size and batch.batch_wait_timeout_s")
        if self.runtime.placement.query_embedder == "retriever" and self.deployments["Retriever"].batch is None:
            raise ValueError("questions are embedded in the Retriever (runtime.placement.query_embedder): give the "
                             "Retriever batch.max_batch_size and batch.batch_wait_timeout_s")
        return self

    def expected_deployments(self) -> tuple[str, ...]:
        """Ingress and Retriever, and the model deployments `runtime.placement` needs, in DEPLOYMENTS order."""
        needed = {"Ingress", "Retriever", *self.runtime.placement.deployed()}
        return tuple(n for n in DEPLOYMENTS if n in needed)

    def custom_resources(self) -> dict[str, float]:
        """The Ray custom resources the deployments ask for, at their largest scale (replicas, or
        max_replicas when autoscaled). On a cluster the GPU worker groups advertise them
        (serve/k8s.py); `saksi serve` starts a one-machine node, which offers them all, so a
        deployment pinned to a GPU class is not left pending there."""
        out: dict[str, float] = {}
        for options in self.deployments.values():
            replicas = options.num_replicas or options.autoscaling_config.max_replicas
            for name, amount in (options.ray_actor_options.resources or {}).items():
                out[name] = out.get(name, 0.0) + amount * replicas
        return out

    def check_retrievers(self, milvus_uri: str) -> None:
        """Milvus Lite lets one process own its file: then exactly one Retriever replica may run
        (a Milvus server lets the retrievers scale out)."""
        if is_milvus_lite(milvus_uri) and self.deployments["Retriever"].num_replicas != 1:
            raise ConfigError(f"the dense index is a Milvus Lite file ({milvus_uri}), which one process owns: the "
                              f"{self.profile} serve config must give the Retriever exactly one replica (num_replicas: 1)"
                              ", or set index.milvus_uri / $SAKSI_MILVUS_URI to a Milvus server")


def load_serve_config(profile: str, directory: str | Path | None = None) -> ServeConfig:
    path = Path(directory or config_dir()) / "serve" / f"{profile}.yaml"
    if not path.exists():
        raise ConfigError(f"no Ray Serve options for profile {profile!r} at {path}")
    return load_config_file(ServeConfig, path)
