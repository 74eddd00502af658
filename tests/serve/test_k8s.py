"""The k8s manifests parse, agree with the code's deployments and with configs/serve/gpu.yaml."""
from __future__ import annotations

import importlib
import json
import re
from pathlib import Path

import pytest
import yaml

from serve import deployments
from serve.ingress import Ingress
from serve.config import DEPLOYMENTS, load_serve_config
from serve import k8s
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


# k8s/Dockerfile, read the way `docker build --target` reads it: stages by their `AS` name, each with its
# instructions (continuation lines joined, comments dropped), and the global ARG defaults before the first FROM.
DOCKERFILE = K8S / "Dockerfile"


def _dockerfile() -> tuple[dict[str, str], dict[str, dict]]:
    lines, cur = [], ""
    for raw in DOCKERFILE.read_text(encoding="utf-8").splitlines():
        if not cur and (not raw.strip() or raw.lstrip().startswith("#")):
            continue
        cur += raw.rstrip()[:-1] + " " if raw.rstrip().endswith("\\") else raw
        if not raw.rstrip().endswith("\\"):
            lines.append(cur.strip())
            cur = ""
    assert not cur, "a continuation line runs off the end of k8s/Dockerfile"
    global_args: dict[str, str] = {}
    stages: dict[str, dict] = {}
    stage = None
    for line in lines:
        op, _, rest = line.partition(" ")
        op = op.upper()
        if op == "FROM":
            words = rest.split()
            assert len(words) == 3 and words[1].upper() == "AS", f"every stage is named: {line}"
            stage = {"base": words[0], "parent": stages.get(words[0]), "instructions": []}
            stages[words[2]] = stage
        elif stage is None:
            assert op == "ARG", line  # only ARG may precede the first FROM
            name, _, default = rest.partition("=")
            global_args[name.strip()] = default.strip()
        else:
            stage["instructions"].append((op, rest.strip()))
    return global_args, stages


def _stage_values(stage: dict, op: str) -> list[str]:
    """Every `op` instruction's argument in this stage and the stages it is built FROM, oldest first."""
    chain = []
    while stage is not None:
        chain.insert(0, stage)
        stage = stage["parent"]
    return [rest for s in chain for o, rest in s["instructions"] if o == op]


def _env(stage: dict) -> dict[str, str]:
    env: dict[str, str] = {}
    for rest in _stage_values(stage, "ENV"):
        name, _, value = rest.partition("=")
        env[name.strip()] = value.strip().strip('"')
    return env


def _args(stage: dict, global_args: dict[str, str]) -> dict[str, str]:
    args = dict(global_args)
    for rest in _stage_values(stage, "ARG"):
        name, _, default = rest.partition("=")
        if default:
            args[name.strip()] = default.strip()
    return args


def _expand(text: str, values: dict[str, str]) -> str:
    for name, value in values.items():
        text = text.replace("${%s}" % name, value).replace("$" + name, value)
    return text


def test_dockerfile_has_an_app_and_a_generator_target_both_ending_as_the_ray_user():
    global_args, stages = _dockerfile()
    assert set(k8s.IMAGES) <= set(stages), (set(k8s.IMAGES), set(stages))
    assert {"app", "generator"} <= set(stages)
    assert global_args.get("RAY_VERSION") == k8s.RAY_VERSION == _service()["spec"]["rayClusterConfig"]["rayVersion"]
    root = stages["app"]
    while root["parent"] is not None:
        root = root["parent"]
    assert _expand(root["base"], global_args).startswith(f"rayproject/ray:{k8s.RAY_VERSION}-"), root["base"]
    for target in k8s.IMAGES:
        users = _stage_values(stages[target], "USER")
        assert users and users[-1].split(":")[0] in ("1000", "ray"), (target, users)  # the Ray image's uid 1000
        runs = " ; ".join(_stage_values(stages[target], "RUN"))
        assert not re.search(r"pip[^;&|]*\binstall\b[^;&|]*\s(-e|--editable)\b", runs), \
            f"{target}: an editable install leaves the code in the build context, not in site-packages"
        for rest in _stage_values(stages[target], "COPY"):  # the files the install reads and builds in are ray's
            assert "--chown=1000" in rest or "--chown=ray" in rest, (target, rest)


def test_the_generator_target_builds_the_vllm_venv_the_generator_deployment_runs_on():
    global_args, stages = _dockerfile()
    gen = stages["generator"]
    venv = _env(gen).get("VLLM_VENV")
    assert venv == k8s.GENERATOR_VENV and k8s.GENERATOR_PYTHON == f"{venv}/bin/python"
    assert "VLLM_VENV" not in _env(stages["app"])
    values = {**_args(gen, global_args), "VLLM_VENV": venv}
    runs = [_expand(r, values) for r in _stage_values(gen, "RUN")]
    assert any(f"python -m venv {venv}" in r.replace('"', "") for r in runs), runs
    installs = " ".join(r.replace('"', "") for r in runs if f"{venv}/bin/pip install" in r.replace('"', ""))
    assert re.search(r"\bvllm==\d+\.\d+\.\d+", installs), installs              # pinned
    assert f"ray[serve,data]=={k8s.RAY_VERSION}" in installs, installs  # the workers' Ray is the cluster's
    assert "[models]" not in installs  # FlagEmbedding's transformers <5 stays out of the vLLM venv


def test_no_deployment_installs_anything_when_a_replica_starts():
    (app,) = yaml.safe_load(_service()["spec"]["serveConfigV2"])["applications"]
    for d in app["deployments"]:
        env = d.get("ray_actor_options", {}).get("runtime_env") or {}
        assert not {"pip", "uv", "conda", "image_uri", "container"} & set(env), (d["name"], env)


def test_the_generator_alone_runs_on_the_vllm_venv_which_only_its_worker_group_has():
    """vLLM's transformers pin and FlagEmbedding's cannot share one environment (k8s/README.md)."""
    d = load_serve_config("gpu").deployments
    assert d["Generator"].ray_actor_options.runtime_env == {"py_executable": k8s.GENERATOR_PYTHON}
    assert all(d[n].ray_actor_options.runtime_env is None for n in ("Embedder", "Reranker", "Judge", "Retriever"))
    spec = _service()["spec"]
    (app,) = yaml.safe_load(spec["serveConfigV2"])["applications"]
    gen = next(x for x in app["deployments"] if x["name"] == "Generator")["ray_actor_options"]
    assert gen["runtime_env"] == {"py_executable": k8s.GENERATOR_PYTHON}
    cluster = spec["rayClusterConfig"]
    image = {g["groupName"]: g["template"]["spec"]["containers"][0]["image"] for g in cluster["workerGroupSpecs"]}
    assert cluster["headGroupSpec"]["template"]["spec"]["containers"][0]["image"] == k8s.IMAGES["app"]
    # the Generator can only land where its custom resource is offered, and every group offering it has the venv
    (large,) = gen["resources"]
    offering = [g["groupName"] for g in cluster["workerGroupSpecs"] if large in _advertised(g)]
    assert offering and all(image[name] == k8s.IMAGES["generator"] for name in offering), image
    assert all(img == k8s.IMAGES["app"] for name, img in image.items() if name not in offering), image
