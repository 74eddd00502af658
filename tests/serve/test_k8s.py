"""The k8s manifests parse, agree with the code's deployments and with configs/serve/gpu.yaml."""
from __future__ import annotations

import importlib
import json
from pathlib import Path

import pytest
import yaml

from serve import deployments
from serve.api import Ingress
from serve.config import DEPLOYMENTS, load_serve_config
from serve.k8s import GPU_CLASSES, HEADER, _Dumper, render_rayservice

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


# Labels NVIDIA GPU Feature Discovery sets on a node (NVIDIA/k8s-device-plugin,
# docs/gpu-feature-discovery/README.md, "Generated Labels"); the integer ones allow Gt/Lt.
GFD_LABELS = {"nvidia.com/gpu.product": str, "nvidia.com/gpu.family": str, "nvidia.com/gpu.machine": str,
              "nvidia.com/gpu.memory": int, "nvidia.com/gpu.count": int, "nvidia.com/gpu.compute.major": int,
              "nvidia.com/gpu.compute.minor": int, "nvidia.com/cuda.driver.major": int}
# KubeRay's RayServiceSpec: "Deprecated: This field is not used anymore" (ray-project/kuberay#1685)
IGNORED_FIELDS = {"serviceUnhealthySecondThreshold", "deploymentUnhealthySecondThreshold"}


def _keys(node) -> set[str]:
    if isinstance(node, dict):
        return set(node).union(*(_keys(v) for v in node.values()))
    if isinstance(node, list):
        return set().union(*(_keys(v) for v in node))
    return set()


def _gpu_groups(spec: dict) -> list[dict]:
    return [g for g in spec["rayClusterConfig"]["workerGroupSpecs"]
            if "nvidia.com/gpu" in g["template"]["spec"]["containers"][0]["resources"]["limits"]]


def _advertised(group: dict) -> dict[str, float]:
    """rayStartParams.resources in the form KubeRay documents: '"{\\"name\\": 1}"' (escaped JSON in quotes)."""
    raw = group["rayStartParams"].get("resources")
    if raw is None:
        return {}
    assert raw.startswith('"{') and raw.endswith('}"') and '\\"' in raw, raw
    return json.loads(raw[1:-1].replace('\\"', '"'))


def test_no_field_kuberay_ignores():
    assert not _keys(_service()) & IGNORED_FIELDS


def test_gpu_groups_select_nodes_by_gpu_feature_discovery_labels():
    for g in _gpu_groups(_service()["spec"]):
        pod = g["template"]["spec"]
        assert "nodeSelector" not in pod  # a class is a range of memory: node affinity, not exact values
        terms = pod["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
        assert terms
        for term in terms:
            exprs = term["matchExpressions"]
            assert any(e["key"] == "nvidia.com/gpu.memory" for e in exprs), g["groupName"]
            for e in exprs:
                assert e["key"] in GFD_LABELS, e
                if e["operator"] in ("Gt", "Lt"):  # Kubernetes: one value, parsed as an integer
                    assert GFD_LABELS[e["key"]] is int and len(e["values"]) == 1 and int(e["values"][0]) >= 0, e
                else:
                    assert e["operator"] in ("In", "NotIn", "Exists") and e["values"], e


def test_gpu_classes_do_not_overlap():
    spans = sorted((c.min_memory_mib, c.max_memory_mib or 10**9) for c in GPU_CLASSES)
    assert all(lo < hi for lo, hi in spans)
    assert all(a[1] <= b[0] for a, b in zip(spans, spans[1:]))


def test_each_custom_resource_is_offered_by_exactly_one_gpu_group_and_the_generator_asks_for_one():
    spec = _service()["spec"]
    offered: dict[str, list[str]] = {}
    for g in spec["rayClusterConfig"]["workerGroupSpecs"]:
        advertised = _advertised(g)
        if g in _gpu_groups(spec):
            gpus = int(g["template"]["spec"]["containers"][0]["resources"]["limits"]["nvidia.com/gpu"])
            assert advertised and all(v == gpus for v in advertised.values()), g["groupName"]  # one unit per GPU
        for name in advertised:
            offered.setdefault(name, []).append(g["groupName"])
    assert all(len(groups) == 1 for groups in offered.values()), offered
    (app,) = yaml.safe_load(spec["serveConfigV2"])["applications"]
    asked = {d["name"]: d["ray_actor_options"].get("resources", {}) for d in app["deployments"]}
    assert asked["Generator"], "the 7B generator must ask for the large-GPU resource"
    (large,) = asked["Generator"]
    assert offered[large] == ["gpu-large"]
    for name, wants in asked.items():
        assert set(wants) <= set(offered), (name, wants)
        opts = next(d for d in app["deployments"] if d["name"] == name)["ray_actor_options"]
        assert all(0 < v <= 1 for v in wants.values())
        assert bool(wants) == bool(opts.get("num_gpus")), name  # every GPU deployment names its class
        assert all(v == opts["num_gpus"] for v in wants.values()), name  # a share of its class, as of the GPU


def test_the_generator_alone_gets_vllm_in_its_own_environment():
    """vLLM's transformers pin and FlagEmbedding's cannot share one environment (README)."""
    from serve.config import load_serve_config

    d = load_serve_config("gpu").deployments
    assert any(p.startswith("vllm") for p in d["Generator"].ray_actor_options.runtime_env["pip"])
    assert d["Generator"].serve_options()["ray_actor_options"]["runtime_env"]["pip"]
    assert all(d[n].ray_actor_options.runtime_env is None for n in ("Embedder", "Reranker", "Judge", "Retriever"))
