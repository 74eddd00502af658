"""Start the local Ray node for `saksi serve` with its listening sockets on loopback, and retry
Ray's known start-up race a bounded number of times.

What binds where (Ray 2.60.0, checked on Linux by tests/serve/test_ray_bind.py)
--------------------------------------------------------------------------------
Ray has no setting for the address its servers bind to: no `RAY_*` variable or `_system_config`
entry names one (none of the `RAY_<config>` names compiled into _raylet.so (293), the raylet (285)
or gcs_server (277) mentions a bind address, host, interface, IP or listen address). Each server
instead asks one question, "is this node's IP loopback?", and binds to loopback if so and to all
interfaces (or the node IP) if not:

* the C++ gRPC servers: GCS (`gcs_server_port`), raylet node manager (`node_manager_port`),
  object manager (`object_manager_port`), and the core-worker server in the driver and in every
  worker and actor process (the "worker ports"). `GrpcServer::Run` (src/ray/rpc/grpc_server.cc
  upstream) listens on loopback when `listen_to_localhost_only_` is set and on the any-address
  otherwise. The installed binaries are compiled, so the evidence here is what they do: with a
  loopback node IP they listen on `::ffff:127.0.0.1`, otherwise on `::`.
* the dashboard agent's gRPC port (`dashboard_agent_listen_port`, the metrics agent):
  ray/dashboard/agent.py:165 `get_localhost_ip() if is_localhost(self.ip) else get_all_interfaces_ip()`;
* the dashboard agent's HTTP port (52365): the node IP, plus 127.0.0.1 when the node IP is not
  loopback (ray/dashboard/http_server_agent.py:53-66);
* the metrics export port (Prometheus, `metrics_export_port`):
  ray/dashboard/modules/reporter/reporter_agent.py:534
  `address=get_localhost_ip() if is_localhost(self._ip) else ""` ("" is every interface);
* the dashboard head's own metrics port (44227): ray/dashboard/head.py:361, and the autoscaler
  monitor's metrics port (44217): ray/autoscaler/_private/monitor.py:205, both
  `{"addr": get_localhost_ip()} if is_localhost(...) else {}` (prometheus_client's default is 0.0.0.0);
* the runtime-env agent's HTTP port (`runtime_env_agent_port`) binds the node IP itself:
  ray/_private/runtime_env/agent/main.py:244.

So everything follows the node IP, and the only difficulty is making that IP loopback. Passing
`_node_ip_address="127.0.0.1"` to `ray.init` is not enough: ray/_private/worker.py:1844 rewrites it
with `services.resolve_ip_for_localhost`, which (ray/_private/services.py:799-801) replaces a
loopback address with `get_node_ip_address()`, the machine's routable address
(services.py:821 `node_ip_address_from_perspective`). The one exception is services.py:815-819:
`if not ray_constants.ENABLE_RAY_CLUSTER: return get_localhost_ip()`, which is how Ray keeps a
macOS/Windows laptop on loopback. `ENABLE_RAY_CLUSTER` is read from
`RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER` (ray/_private/ray_constants.py:657-661, default true on
Linux); nothing else reads the constant except the `ray start` CLI's warnings
(ray/scripts/scripts.py:1091, 1169). `start_local_ray` therefore sets that variable to 0 for the
duration of `ray.init` (the processes Ray starts inherit it, and set the already-imported constant
too), and puts both back afterwards.

With a loopback `host` (the default) every listening socket of the processes Ray core starts is
on 127.0.0.1 (or ::ffff:127.0.0.1, the IPv4-mapped form gRPC uses): GCS, raylet node manager and
object manager, driver and worker core-worker ports (Serve's controller, proxy and replica actors
included), dashboard agent gRPC and HTTP, metrics export port, runtime-env agent, the dashboard
head's and autoscaler's metrics ports; no UDP sockets. `start_local_ray` checks the node IP Ray
ended up with and refuses to carry on if it is not loopback. The fixed ports (52365, 44217, 44227)
are simply not opened when another Ray node on the machine already holds them; Ray carries on.

What cannot be bound to an address of your choosing:
* Serve's inter-deployment gRPC server, one per replica process: ray/serve/_private/replica.py:1835
  `self._internal_grpc_port = add_port_to_grpc_server(self._server, "[::]:0")`, unconditionally,
  with no setting or environment variable to change it, so every `saksi serve` replica listens on
  `::` (all interfaces, IPv4 too) on a random port. Ray core does not start it: Serve does, in
  `serve.run`, after this module is done. It is behind Ray's token-auth interceptor
  (replica.py:1182-1185, `create_grpc_server_with_interceptors`; Ray 2.60 turns token auth on by
  default, see its "Token authentication is enabled" warning), so it is not an open door, but it
  is reachable from the network; a firewall is the only way to close it short of patching Serve.
* Any non-loopback address. With `host` set to a specific interface address Ray advertises that
  address, but the gRPC servers above still listen on every interface (`::`), and the metrics
  ports on 0.0.0.0: Ray only offers "loopback" or "everything" (the code cited above). This
  module says so when asked for such a host; it does not pretend otherwise.
* Not started here, so not bound at all: the dashboard web UI (`include_dashboard=False`; its
  `dashboard_host` default is "localhost" anyway), the Ray Client server (only `ray start
  --ray-client-server-port`; it would default to 0.0.0.0, ray/util/client/server/server.py:870),
  Serve's gRPC proxy (only when `grpc_options` names servicer functions, serve/_private/proxy.py:1740),
  and Serve's HAProxy / direct-ingress modes (off unless RAY_SERVE_ENABLE_HA_PROXY=1 or
  RAY_SERVE_ENABLE_DIRECT_INGRESS=1, serve/_private/constants.py:747-752; they would open replica
  HTTP ports). Serve's HTTP proxy binds whatever `serve.start(http_options={"host": ...})` says:
  `saksi serve --host`.

The start-up race
-----------------
On a loaded 2-core machine `ray.init` sometimes gives up before its own processes are ready:
"Timed out waiting for file <session>/gcs_server_port_<node id>" (the GCS did not publish its port
within `RAY_gcs_server_port_wait_time_s`, default 30 s, ray/_private/node.py:1403-1412) or "The
current node timed out during startup" (the raylet did not register with the GCS within a fixed
30 s, node.py:428-444). Both are raised from inside `Node.__init__`, so `ray.shutdown()` cannot
reach the processes that were already started (no `_global_node` was set). After such a failure
this module ends the Ray processes that attempt started (by pid: the child processes of this one
that are new and run Ray, and everything under them), waits, and tries again, up to `attempts`
times. Any other error is raised at once (after the same clean-up).
"""
from __future__ import annotations

import os
import sys
import time
from contextlib import contextmanager
from typing import Any, Callable, Iterator

from pipeline.errors import SaksiError

ENABLE_CLUSTER_ENV = "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"
RACE_MESSAGES = ("Timed out waiting for file", "timed out during startup")
LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1")  # what ray._common.network_utils.is_localhost accepts
ALL_INTERFACES = ("0.0.0.0", "::", "")


class RayStartError(SaksiError):
    stage = "ray"


def is_startup_race(error: BaseException) -> bool:
    """Whether `ray.init` failed with one of the known start-up timeouts (worth another try)."""
    return any(m in str(error) for m in RACE_MESSAGES)


def is_loopback(host: str) -> bool:
    return host.strip().lower() in LOOPBACK_HOSTS


@contextmanager
def _node_ip_on_loopback() -> Iterator[None]:
    """Make Ray pick a loopback node IP (see the module docstring) while the block runs."""
    old = os.environ.get(ENABLE_CLUSTER_ENV)
    os.environ[ENABLE_CLUSTER_ENV] = "0"
    constants = sys.modules.get("ray._private.ray_constants")
    old_constant = getattr(constants, "ENABLE_RAY_CLUSTER", None)
    if constants is not None:
        constants.ENABLE_RAY_CLUSTER = False
    try:
        yield
    finally:
        if old is None:
            os.environ.pop(ENABLE_CLUSTER_ENV, None)
        else:
            os.environ[ENABLE_CLUSTER_ENV] = old
        constants = sys.modules.get("ray._private.ray_constants")
        if constants is not None:
            # imported before the block: put the old value back; imported inside it (under our
            # variable): recompute it the way ray_constants does, from the restored environment
            constants.ENABLE_RAY_CLUSTER = (old_constant if old_constant is not None
                                            else constants.env_bool(ENABLE_CLUSTER_ENV,
                                                                    not constants.IS_WINDOWS_OR_OSX))


def _ray_markers() -> tuple[str, ...]:
    ray = sys.modules.get("ray")
    where = os.path.dirname(getattr(ray, "__file__", "") or "") if ray is not None else ""
    return tuple(m for m in (where + os.sep if where else "", "ray::") if m)


def _children() -> set[int]:
    """The pids of this process's direct children."""
    try:
        import psutil
    except ImportError:  # psutil comes with ray; without it there is nothing to clean up by pid
        return set()
    try:
        return {p.pid for p in psutil.Process().children()}
    except psutil.Error:
        return set()


def _end_new_ray_processes(before: set[int], grace_s: float = 5.0) -> int:
    """End what a failed `ray.init` left behind: this process's direct children that did not exist
    before it and whose command line is Ray's (gcs_server, raylet, monitor, dashboard, reaper...),
    and everything under them (agents, workers). A Ray node this process started earlier is left
    alone: its raylet, and so its workers, were already there. Returns how many processes it ended."""
    try:
        import psutil
    except ImportError:
        return 0
    markers = _ray_markers()
    doomed: dict[int, Any] = {}
    try:
        children = psutil.Process().children()
    except psutil.Error:
        return 0
    for proc in children:
        if proc.pid in before:
            continue
        try:
            if not any(m in " ".join(proc.cmdline()) for m in markers):
                continue
            doomed[proc.pid] = proc
            doomed.update((p.pid, p) for p in proc.children(recursive=True))
        except psutil.Error:
            continue
    left = list(doomed.values())
    for proc in left:
        try:
            proc.terminate()
        except psutil.Error:
            pass
    _, alive = psutil.wait_procs(left, timeout=grace_s)
    for proc in alive:
        try:
            proc.kill()
        except psutil.Error:
            pass
    return len(left)


def _first_line(error: BaseException) -> str:
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__


def start_local_ray(host: str = "127.0.0.1", attempts: int = 3, num_cpus: int | None = None,
                    log_to_driver: bool = False, say: Callable[[str], Any] = print,
                    retry_delay_s: float = 5.0, init: Callable[..., Any] | None = None,
                    shutdown: Callable[[], Any] | None = None, **init_kwargs: Any) -> Any:
    """Start a new local Ray node (never joins an existing cluster, whatever RAY_ADDRESS says) and
    connect this process to it; returns what `ray.init` returns.

    host: "127.0.0.1" / "localhost" / "::1" puts every Ray listening socket on loopback;
        "0.0.0.0" / "::" is Ray's default (a routable node IP, every interface); any other address
        becomes the node IP Ray advertises, but Ray still listens on every interface (said via `say`).
    attempts: how many times to try when `ray.init` hits the known start-up race; other errors
        are raised at once.
    say: where the one-line notes go (a retry, a non-loopback host).
    init, shutdown: stand-ins for `ray.init` / `ray.shutdown` (tests; with a stand-in init the
        node IP is not checked).
    init_kwargs: passed on to `ray.init`.
    """
    if attempts < 1:
        raise ValueError("attempts must be at least 1")
    real_ray = init is None
    if init is None or shutdown is None:
        import ray

        init = init or ray.init
        shutdown = shutdown or ray.shutdown
    loopback = is_loopback(host)
    kwargs: dict[str, Any] = {"address": "local", "include_dashboard": False,
                              "log_to_driver": log_to_driver, **init_kwargs}
    if num_cpus is not None:
        kwargs["num_cpus"] = num_cpus
    if loopback:
        kwargs["_node_ip_address"] = host
    elif host.strip() not in ALL_INTERFACES:
        kwargs["_node_ip_address"] = host.strip()
    if not loopback:
        say(f"note: Ray's internal ports will listen on every interface (Ray 2.60 binds either loopback "
            f"or all interfaces; {host or 'the default'!r} is not loopback)")

    for attempt in range(1, attempts + 1):
        before = _children()
        try:
            if loopback:
                with _node_ip_on_loopback():
                    context = init(**kwargs)
            else:
                context = init(**kwargs)
        except Exception as e:
            race = is_startup_race(e)
            if race:
                shutdown()
            ended = _end_new_ray_processes(before)
            if not race:
                raise
            if attempt == attempts:
                raise RayStartError(
                    f"Ray did not start after {attempts} attempt(s); the last one failed with: "
                    f"{_first_line(e)} (a slow or busy machine: try again, or raise "
                    f"RAY_gcs_server_port_wait_time_s)") from e
            say(f"Ray did not start (attempt {attempt}/{attempts}: {_first_line(e)}); ended {ended} "
                f"leftover Ray process(es), retrying in {retry_delay_s:g} s")
            time.sleep(retry_delay_s)
            continue
        if loopback and real_ray:
            _check_loopback(shutdown)
        return context
    raise AssertionError("unreachable")


def _check_loopback(shutdown: Callable[[], Any]) -> None:
    """Refuse a node whose IP is not loopback (its servers would listen on every interface)."""
    import ray._private.worker

    ip = ray._private.worker._global_node.node_ip_address
    if not is_loopback(ip):
        shutdown()
        raise RayStartError(f"Ray chose node IP {ip} instead of loopback, so its ports would listen on "
                            f"every interface; stopped it (is {ENABLE_CLUSTER_ENV} honoured by this Ray?)")


def start_or_join(say: Callable[[str], Any] = print) -> None:
    """For jobs (`saksi batch`, `saksi bulk-ingest`): join the cluster $RAY_ADDRESS names (as under
    `ray job submit`), else start a local node on loopback as `saksi serve` does."""
    import os

    import ray

    if ray.is_initialized():
        return
    if os.environ.get("RAY_ADDRESS"):
        ray.init(include_dashboard=False, log_to_driver=False)
    else:
        start_local_ray("127.0.0.1", say=say)
