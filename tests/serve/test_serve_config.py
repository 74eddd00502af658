"""The Ray Serve options: every deadline and limit in `runtime`, and one rule for Milvus Lite."""
from __future__ import annotations

import pytest

from pipeline.errors import ConfigError
from serve.config import RuntimeSettings, load_serve_config

pytestmark = pytest.mark.unit


@pytest.mark.parametrize("profile", ["lite", "full-cpu", "gpu"])
def test_every_profile_states_its_runtime_limits(profile):
    runtime = load_serve_config(profile).runtime
    assert isinstance(runtime, RuntimeSettings)
    assert runtime.judge_timeout_s <= runtime.request_timeout_s  # a judge never outlives the question


def _two_retrievers(profile: str):
    cfg = load_serve_config(profile)
    retriever = cfg.deployments["Retriever"].model_copy(update={"num_replicas": 2, "autoscaling_config": None})
    return cfg.model_copy(update={"deployments": {**cfg.deployments, "Retriever": retriever}})


@pytest.mark.parametrize("profile", ["lite", "gpu"])
def test_a_milvus_lite_file_allows_one_retriever_a_server_allows_more(profile, tmp_path):
    cfg = _two_retrievers(profile)
    with pytest.raises(ConfigError, match="exactly one replica"):
        cfg.check_retrievers(str(tmp_path / "milvus.db"))
    cfg.check_retrievers("http://milvus:19530")  # a server: the retrievers scale out


def test_the_shipped_lite_options_fit_milvus_lite_and_the_gpu_options_need_a_server(tmp_path):
    load_serve_config("lite").check_retrievers(str(tmp_path / "milvus.db"))
    with pytest.raises(ConfigError, match="SAKSI_MILVUS_URI"):  # autoscaled retrievers: a Milvus server
        load_serve_config("gpu").check_retrievers(str(tmp_path / "milvus.db"))


def test_a_one_machine_node_offers_every_custom_resource_the_deployments_ask_for():
    """`saksi serve` starts its own node: the GPU classes the gpu profile pins deployments to must be
    on it (each deployment's share times its largest replica count), or they would stay pending."""
    from serve.config import load_serve_config

    cfg = load_serve_config("gpu")
    wanted: dict[str, float] = {}
    for options in cfg.deployments.values():
        replicas = options.num_replicas or options.autoscaling_config.max_replicas
        for name, amount in (options.ray_actor_options.resources or {}).items():
            wanted[name] = wanted.get(name, 0) + amount * replicas
    assert wanted and cfg.custom_resources() == wanted
    assert cfg.deployments["Generator"].ray_actor_options.resources == {"gpu_large": 1}
    assert load_serve_config("lite").custom_resources() == {}  # nothing pinned on a laptop


def test_placement_decides_which_model_deployments_exist():
    """A model run inside its caller has no deployment: an entry for it is an error that says why,
    and so is a missing entry for a model placed in its own deployment."""
    from serve.config import Placement, ServeConfig

    lite = load_serve_config("lite")
    assert lite.expected_deployments() == ("Ingress", "Retriever", "Embedder")
    for profile in ("full-cpu", "gpu"):
        assert load_serve_config(profile).expected_deployments() == (
            "Ingress", "Retriever", "Embedder", "Reranker", "Generator", "Judge")

    raw = lite.model_dump()
    raw["deployments"]["Judge"] = {"num_replicas": 1, "batch": {"max_batch_size": 4}}
    with pytest.raises(ValueError, match=r"unknown: \['Judge'\].*Reranker, Generator, Judge inside their callers"):
        ServeConfig.model_validate(raw)

    raw = lite.model_dump()
    raw["runtime"]["placement"] = Placement(query_embedder="retriever", reranker="reranker", generator="ingress",
                                            judge="ingress").model_dump()
    with pytest.raises(ValueError, match=r"missing: \['Reranker'\]"):
        ServeConfig.model_validate(raw)

    raw = lite.model_dump()
    raw["deployments"]["Retriever"]["batch"] = None
    with pytest.raises(ValueError, match="questions are embedded in the Retriever"):
        ServeConfig.model_validate(raw)


def test_autoscaling_delays_reach_serve_only_when_set():
    from serve.config import DeploymentOptions

    plain = DeploymentOptions.model_validate({"autoscaling_config": {"min_replicas": 1, "max_replicas": 3}})
    assert plain.serve_options()["autoscaling_config"] == {"min_replicas": 1, "max_replicas": 3,
                                                           "target_ongoing_requests": 4}
    quick = DeploymentOptions.model_validate({"autoscaling_config": {"max_replicas": 3, "upscale_delay_s": 2,
                                                                     "downscale_delay_s": 15}})
    assert quick.serve_options()["autoscaling_config"]["upscale_delay_s"] == 2
    assert quick.serve_options()["autoscaling_config"]["downscale_delay_s"] == 15
    with pytest.raises(ValueError):
        DeploymentOptions.model_validate({"autoscaling_config": {"max_replicas": 3, "downscale_delay_s": -1}})
