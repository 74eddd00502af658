"""Render k8s/rayservice.yaml: a KubeRay RayService whose serveConfigV2 comes from the same
configs/serve/<profile>.yaml the local app uses, so the cluster and the laptop cannot drift.

    python -m serve.k8s > k8s/rayservice.yaml        # after changing configs/serve/gpu.yaml

Cluster shape: a CPU head that runs no workloads (num-cpus 0), a CPU worker group for the
ingress and retrievers, and one GPU worker group per GPU class (GPU_CLASSES): a small-GPU group
for the embedder, reranker and judge, and a large-GPU group for the vLLM generator. The Ray
autoscaler adds workers when Serve's autoscaling asks for replicas that do not fit.

Scheduling, in two layers:
- Kubernetes puts each GPU group's pods on nodes of its class by node affinity on the labels
  NVIDIA GPU Feature Discovery sets: `nvidia.com/gpu.memory` (MiB per GPU, an integer, so a class
  is a `Gt`/`Lt` range) and, optionally, `nvidia.com/gpu.product` (an `In` list).
- Ray puts each deployment on its class: every GPU group advertises a custom resource
  (`rayStartParams.resources`, one unit per GPU) and configs/serve/gpu.yaml has the deployments
  request it, so the 7B generator never lands on a small GPU (to Ray both would be `GPU: 1`).

Images: two targets of k8s/Dockerfile (IMAGES). The large-GPU group runs `generator`, which adds a separate
virtualenv with vLLM; the Generator deployment starts on that venv's python (`py_executable`), so its
environment exists before traffic and nothing is pip-installed when a replica starts. Every other group runs
`app`.
"""
from __future__ import annotations

import json
import sys
from dataclasses import dataclass

import yaml

from .app import serve_config_v2

# The two targets of k8s/Dockerfile (`docker build -f k8s/Dockerfile --target <name>`), by target name:
# `app` (saksi + its `models` extra) for the head, the CPU group and the small-GPU group; `generator` (app plus
# the vLLM virtualenv at GENERATOR_VENV) for the large-GPU group, where the Generator deployment runs on that
# venv's python (configs/serve/gpu.yaml: `runtime_env: {py_executable: ...}`). tests/serve/test_k8s.py checks
# the names, the venv path and RAY_VERSION against the Dockerfile.
IMAGES = {"app": "ghcr.io/saksi/saksi:0.1.0-gpu", "generator": "ghcr.io/saksi/saksi:0.1.0-gpu-generator"}
IMAGE = IMAGES["app"]
GENERATOR_VENV = "/opt/vllm-venv"        # k8s/Dockerfile, target `generator`: ENV VLLM_VENV
GENERATOR_PYTHON = f"{GENERATOR_VENV}/bin/python"
RAY_VERSION = "2.60.0"                   # k8s/Dockerfile: ARG RAY_VERSION (the base image's tag)
DATA_DIR = "/data/corpus"                # the shared volume (k8s/storage.yaml), read-only for retrievers
PROFILE = "gpu"

_ENV = [
    {"name": "SAKSI_MILVUS_URI", "valueFrom": {"configMapKeyRef": {"name": "saksi-config", "key": "milvus_uri"}}},
    {"name": "SAKSI_DATA_DIR", "value": DATA_DIR},
    {"name": "HF_HOME", "value": "/models/hf"},
    {"name": "SAKSI_MILVUS_TOKEN", "valueFrom": {"secretKeyRef": {"name": "saksi-secrets", "key": "milvus_token"}}},
]
_MOUNTS = [{"name": "corpus", "mountPath": "/data"}, {"name": "models", "mountPath": "/models"}]
_VOLUMES = [{"name": "corpus", "persistentVolumeClaim": {"claimName": "saksi-corpus"}},
            {"name": "models", "persistentVolumeClaim": {"claimName": "saksi-models"}}]


# GPU Feature Discovery's node labels (NVIDIA/k8s-device-plugin, docs/gpu-feature-discovery/README.md,
# "Generated Labels"): gpu.memory is an Integer "Memory of the GPU in Mb" (MiB as nvidia-smi reports it,
# e.g. 23028 for an A10, 81559 for an H100 80GB HBM3); gpu.product a String such as NVIDIA-H100-80GB-HBM3.
GFD_MEMORY = "nvidia.com/gpu.memory"
GFD_PRODUCT = "nvidia.com/gpu.product"


@dataclass(frozen=True)
class GpuClass:
    """One GPU worker group: which nodes it may use, and the Ray resource it advertises."""
    group: str                     # workerGroupSpecs[].groupName
    resource: str                  # custom Ray resource, one unit per GPU; deployments request it
    min_memory_mib: int            # nvidia.com/gpu.memory >= this (inclusive)
    max_memory_mib: int | None = None   # nvidia.com/gpu.memory < this (exclusive); None: no ceiling
    products: tuple[str, ...] = ()      # if set, also nvidia.com/gpu.product In these (exact GFD values)
    cpu: str = "8"
    memory: str = "48Gi"
    replicas: tuple[int, int, int] = (1, 1, 4)   # replicas, minReplicas, maxReplicas
    target: str = "app"            # the k8s/Dockerfile target (a key of IMAGES) this group's pods run

    def match_expressions(self) -> list[dict]:
        # Gt/Lt take one integer value and are strict; an absent label never matches, so a node
        # without GPU Feature Discovery's labels is never chosen.
        exprs = [{"key": GFD_MEMORY, "operator": "Gt", "values": [str(self.min_memory_mib - 1)]}]
        if self.max_memory_mib is not None:
            exprs.append({"key": GFD_MEMORY, "operator": "Lt", "values": [str(self.max_memory_mib)]})
        if self.products:
            exprs.append({"key": GFD_PRODUCT, "operator": "In", "values": list(self.products)})
        return exprs


# Where a GPU class is defined: edit here (and the matching `resources:` in configs/serve/gpu.yaml),
# then regenerate. 38,000 MiB splits 16-24 GB cards (T4 15360, A10/A10G 23028, L4 23034) from
# 40-141 GB ones (A100 40GB, L40S 46068, A100/H100 80GB, H200): the 7B generator's bf16 weights
# (~15 GB) plus vLLM's KV cache want the latter; BGE-M3, the reranker and mDeBERTa fit the former.
GPU_CLASSES: tuple[GpuClass, ...] = (
    GpuClass("gpu-small", "gpu_small", min_memory_mib=15_000, max_memory_mib=38_000, cpu="8", memory="48Gi"),
    GpuClass("gpu-large", "gpu_large", min_memory_mib=38_000, cpu="16", memory="128Gi", target="generator"),
)


def ray_resources_param(resources: dict[str, float]) -> str:
    """`rayStartParams.resources` as KubeRay documents it: a JSON object with its quotes backslash-escaped,
    inside double quotes (in YAML: '"{\\"gpu_large\\": 1}"'); the backslashes are part of the string."""
    return '"' + json.dumps(resources).replace('"', '\\"') + '"'


def _affinity(cls: GpuClass) -> dict:
    return {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [{"matchExpressions": cls.match_expressions()}]}}}


def _pod(cpu: str, memory: str, gpus: int = 0, affinity: dict | None = None, image: str = IMAGE) -> dict:
    limits = {"cpu": cpu, "memory": memory, **({"nvidia.com/gpu": str(gpus)} if gpus else {})}
    spec: dict = {
        "containers": [{"name": "ray", "image": image, "env": _ENV, "volumeMounts": _MOUNTS,
                        "resources": {"requests": dict(limits), "limits": limits},
                        "lifecycle": {"preStop": {"exec": {"command": ["/bin/sh", "-c", "ray stop"]}}}}],
        "volumes": _VOLUMES,
    }
    if gpus:
        spec["tolerations"] = [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]
    if affinity:
        spec["affinity"] = affinity
    return {"spec": spec}


def _group(name: str, replicas: int, lo: int, hi: int, cpu: str, memory: str) -> dict:
    return {"groupName": name, "replicas": replicas, "minReplicas": lo, "maxReplicas": hi, "rayStartParams": {},
            "template": _pod(cpu, memory)}


def _gpu_group(cls: GpuClass, gpus: int = 1) -> dict:
    replicas, lo, hi = cls.replicas
    return {"groupName": cls.group, "replicas": replicas, "minReplicas": lo, "maxReplicas": hi,
            "rayStartParams": {"resources": ray_resources_param({cls.resource: gpus})},
            "template": _pod(cls.cpu, cls.memory, gpus, _affinity(cls), IMAGES[cls.target])}


def render_rayservice(profile: str = PROFILE) -> dict:
    return {
        "apiVersion": "ray.io/v1",
        "kind": "RayService",
        "metadata": {"name": "saksi", "labels": {"app.kubernetes.io/name": "saksi"}},
        "spec": {
            "serveConfigV2": yaml.safe_dump(serve_config_v2(profile, DATA_DIR), sort_keys=False),
            "rayClusterConfig": {
                "rayVersion": RAY_VERSION,
                "enableInTreeAutoscaling": True,
                "autoscalerOptions": {"upscalingMode": "Default", "idleTimeoutSeconds": 300},
                "headGroupSpec": {"rayStartParams": {"num-cpus": "0", "dashboard-host": "0.0.0.0"},
                                  "template": _pod("4", "16Gi")},
                "workerGroupSpecs": [_group("cpu", 2, 1, 8, "8", "32Gi"), *(_gpu_group(c) for c in GPU_CLASSES)],
            },
        },
    }


class _Dumper(yaml.SafeDumper):
    """Multi-line strings (serveConfigV2) as literal blocks, the way KubeRay examples show them."""


_Dumper.add_representer(str, lambda d, v: d.represent_scalar("tag:yaml.org,2002:str", v,
                                                             style="|" if "\n" in v else None))


HEADER = ("# Generated by `python -m serve.k8s` from configs/serve/gpu.yaml: edit those, then regenerate.\n"
          "# tests/serve/test_k8s.py fails when this file and the configs disagree.\n")


def main() -> int:
    sys.stdout.write(HEADER + yaml.dump(render_rayservice(), Dumper=_Dumper, sort_keys=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
