"""The k8s manifests parse, agree with the code's deployments and with configs/serve/gpu.yaml."""
from __future__ import annotations

import importlib
from pathlib import Path

import pytest
import yaml

from serve import deployments
from serve.api import Ingress
from serve.config import DEPLOYMENTS, load_serve_config
from serve.k8s import HEADER, _Dumper, render_rayservice

pytestmark = pytest.mark.unit

K8S = Path(__file__).resolve().parents[2] / "k8s"


def _docs(path: Path) -> list[dict]:
    return [d for d in yaml.safe_load_all(path.read_text(encoding="utf-8")) if d is not None]


@pytest.mark.parametrize("path", sorted(p.relative_to(K8S).as_posix() for p in K8S.rglob("*.yaml")))
def test_every_manifest_parses_into_kubernetes_objects(path):
    docs = _docs(K8S / path)
    assert docs
    for d in docs:
        assert {"apiVersion", "kind", "metadata"} <= set(d) or path.endswith("values.yaml"), (path, d)


def _service() -> dict:
    (svc,) = _docs(K8S / "rayservice.yaml")
    assert svc["kind"] == "RayService" and svc["apiVersion"] == "ray.io/v1"
    return svc


def test_rayservice_is_the_generated_one():
    text = (K8S / "rayservice.yaml").read_text(encoding="utf-8")
    assert text == HEADER + yaml.dump(render_rayservice(), Dumper=_Dumper, sort_keys=False), \
        "k8s/rayservice.yaml is stale: run `python -m serve.k8s > k8s/rayservice.yaml`"


def test_serve_config_import_path_imports_and_names_match_the_code():
    cfg = yaml.safe_load(_service()["spec"]["serveConfigV2"])
    (app,) = cfg["applications"]
    module, attr = app["import_path"].split(":")
    builder = getattr(importlib.import_module(module), attr)
    assert callable(builder)
    code_names = {d.name for d in (deployments.EmbedderDeployment, deployments.RerankerDeployment,
                                   deployments.GeneratorDeployment, deployments.JudgeDeployment,
                                   deployments.RetrieverDeployment, Ingress)}
    assert code_names == set(DEPLOYMENTS) == {d["name"] for d in app["deployments"]}
    serve_cfg = load_serve_config(app["args"]["profile"])
    for d in app["deployments"]:
        assert {k: v for k, v in d.items() if k != "name"} == serve_cfg.deployments[d["name"]].serve_options()


def test_cluster_has_a_cpu_head_and_gpu_groups_for_the_gpu_deployments():
    spec = _service()["spec"]["rayClusterConfig"]
    assert spec["headGroupSpec"]["rayStartParams"]["num-cpus"] == "0"
    assert spec["enableInTreeAutoscaling"] is True
    gpu_groups = [g for g in spec["workerGroupSpecs"]
                  if "nvidia.com/gpu" in g["template"]["spec"]["containers"][0]["resources"]["limits"]]
    assert len(gpu_groups) >= 2 and all(g["minReplicas"] <= g["replicas"] <= g["maxReplicas"] for g in gpu_groups)
    needs = [o.ray_actor_options.num_gpus for o in load_serve_config("gpu").deployments.values()]
    assert max(needs) <= 1 and sum(1 for n in needs if n) >= 4  # every model deployment holds a GPU share
    env = {e["name"] for e in spec["headGroupSpec"]["template"]["spec"]["containers"][0]["env"]}
    assert {"SAKSI_MILVUS_URI", "SAKSI_MILVUS_TOKEN", "SAKSI_DATA_DIR"} <= env
    config_names = {d["metadata"]["name"] for d in _docs(K8S / "config.yaml")}
    assert config_names == {"saksi-config", "saksi-secrets"}


def test_the_generator_alone_gets_vllm_in_its_own_environment():
    """vLLM's transformers pin and FlagEmbedding's cannot share one environment (README)."""
    from serve.config import load_serve_config

    d = load_serve_config("gpu").deployments
    assert any(p.startswith("vllm") for p in d["Generator"].ray_actor_options.runtime_env["pip"])
    assert d["Generator"].serve_options()["ray_actor_options"]["runtime_env"]["pip"]
    assert all(d[n].ray_actor_options.runtime_env is None for n in ("Embedder", "Reranker", "Judge", "Retriever"))
