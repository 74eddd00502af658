"""The Ingress deployment: each replica builds the service over the deployments' handles and serves the HTTP
app around it (serve/http_app.py). It holds nothing else: what a request may do is the service's
(serve/service.py), where the models run is `runtime.placement`'s (serve/handles.py)."""
from __future__ import annotations

import logging

from ray import serve
from ray.serve.handle import DeploymentHandle

from pipeline.analysis import query_analyzer
from pipeline.config import load_profile

from .auth import Guard
from .config import RuntimeSettings
from .handles import HandleStages, RemoteLibrary
from .http_app import make_app
from .rates import RateLimiter
from .service import Service

log = logging.getLogger(__name__)


@serve.deployment(name="Ingress")
@serve.ingress()
class Ingress:
    def __init__(self, profile: str, data_dir: str, runtime: RuntimeSettings, embedder: DeploymentHandle,
                 retriever: DeploymentHandle, reranker: DeploymentHandle | None, generator: DeploymentHandle | None,
                 judge: DeploymentHandle | None):
        """A model whose handle is None runs inside its caller (runtime.placement): it has no deployment."""
        given = {"Embedder": embedder, "Retriever": retriever, "Reranker": reranker, "Generator": generator,
                 "Judge": judge}
        handles = {name: h for name, h in given.items() if h is not None}  # the deployments there are
        loaded = load_profile(profile)
        analyzer = query_analyzer(loaded)
        self.service = Service(loaded, data_dir, runtime, RemoteLibrary(retriever),
                               HandleStages(loaded, analyzer, runtime, handles),
                               probes={name: h.ready.remote for name, h in handles.items()}, analyzer=analyzer)
        self.guard = Guard(self.service.keys, RateLimiter(runtime.rate_per_minute, runtime.rate_burst))
        if self.service.no_keys():
            log.warning("no API keys in %s: every request but /healthz gets 401 until an operator runs "
                        "`saksi keys create`", self.service.data_dir.root)

    def __serve_build_asgi_app__(self):
        """This replica's app, built here around its own service (Serve calls it after the constructor)."""
        return make_app(self.service, self.guard)
