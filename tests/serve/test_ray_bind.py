"""serve.ray_start: the Ray node `saksi serve` starts listens on loopback only, and the known
start-up race is retried a bounded number of times (and nothing else is)."""
from __future__ import annotations

import ipaddress
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from serve import ray_start
from serve.ray_start import ENABLE_CLUSTER_ENV, RayStartError, is_startup_race, start_local_ray

ROOT = Path(__file__).resolve().parents[2]

# Listening sockets Ray 2.60 opens beyond loopback even with a loopback node IP: process-name
# prefix -> the one wildcard address it binds. Everything Ray core starts binds loopback (see
# serve/ray_start.py's docstring); the exception is Serve's per-replica gRPC server for
# inter-deployment calls, hard-coded to "[::]:0" with no setting to change it
# (ray/serve/_private/replica.py:1835 `add_port_to_grpc_server(self._server, "[::]:0")`); it sits
# behind Ray's token-auth interceptor (replica.py:1182-1185). One such socket per replica process
# is allowed; any other listener that is not loopback fails the test.
KNOWN_UNBINDABLE: dict[str, str] = {"ray::ServeReplica:": "::"}

# Run in a child interpreter so that this node cannot collide with the Ray the other serve tests
# start in this process (tests/serve/conftest.py), and so that everything it started goes with it.
# Its first ray.init is made to hit the real start-up race (the GCS gets 0 s to publish its port),
# so the retry and the clean-up of the failed attempt's processes are exercised on a real node.
PROBE = r'''
import json, os, socket, sys, time
import psutil, ray
from ray import serve
from serve.ray_start import start_local_ray

real_init, attempts = ray.init, []

def init(**kwargs):
    attempts.append(1)
    if len(attempts) == 1:
        os.environ["RAY_gcs_server_port_wait_time_s"] = "0"
    else:
        os.environ.pop("RAY_gcs_server_port_wait_time_s", None)
    return real_init(**kwargs)

ray.init = init  # start_local_ray looks ray.init up when called

def listeners():
    me = psutil.Process()
    found = []
    for proc in [me, *me.children(recursive=True)]:
        try:
            name, cmd = proc.name(), " ".join(proc.cmdline()).splitlines()[0][:160]
            conns = proc.net_connections(kind="inet")
        except psutil.Error:
            continue
        for c in conns:
            udp = c.type == socket.SOCK_DGRAM
            if c.status == psutil.CONN_LISTEN or (udp and not c.raddr):
                found.append({"pid": proc.pid, "name": name, "cmd": cmd, "ip": c.laddr.ip,
                              "port": c.laddr.port, "proto": "udp" if udp else "tcp"})
    return found

@ray.remote
def one():
    return 1

@serve.deployment
class Echo:
    def __call__(self, request):
        return "ok"

with socket.socket() as s:
    s.bind(("127.0.0.1", 0))
    http_port = s.getsockname()[1]
said = []
start_local_ray(num_cpus=2, say=said.append, retry_delay_s=1)
try:
    gcs_servers = sum(p.name() == "gcs_server" for p in psutil.Process().children(recursive=True))
    node = ray.nodes()[0]
    named = {"gcs": int(ray._private.worker._global_node.gcs_address.rsplit(":", 1)[1]),
             "node_manager": node["NodeManagerPort"], "object_manager": node["ObjectManagerPort"],
             "metrics_export": node["MetricsExportPort"], "metrics_agent": node["MetricsAgentPort"],
             "dashboard_agent_http": node["DashboardAgentListenPort"],
             "runtime_env_agent": node["RuntimeEnvAgentPort"], "serve_http": http_port}
    # a port Ray reports as -1 (or 0) was not opened: the dashboard agent's HTTP port is a fixed
    # 52365, which another Ray node on this machine may already hold (Ray carries on without it)
    named = {k: v for k, v in named.items() if v and v > 0}
    assert ray.get(one.remote()) == 1  # a worker process, with its core-worker port
    serve.start(http_options={"host": "127.0.0.1", "port": http_port})  # controller + proxy actors
    serve.run(Echo.bind(), name="bindprobe", route_prefix="/probe")  # and a replica
    deadline = time.monotonic() + 30  # the agents' ports come up in their own time
    while True:
        found = listeners()
        if set(named.values()) <= {l["port"] for l in found} or time.monotonic() > deadline:
            break
        time.sleep(1)
    print("RESULT:" + json.dumps({"node_ip": node["NodeManagerAddress"], "driver": os.getpid(),
                                  "named": named, "listeners": found, "said": said,
                                  "attempts": len(attempts), "gcs_servers": gcs_servers}), flush=True)
finally:
    ray.shutdown()
'''


def _loopback(ip: str) -> bool:
    addr = ipaddress.ip_address(ip.split("%", 1)[0])
    mapped = getattr(addr, "ipv4_mapped", None)
    return addr.is_loopback or (mapped is not None and mapped.is_loopback)


@pytest.mark.integration
def test_every_ray_listener_is_on_loopback_after_a_retried_race():
    env = {k: v for k, v in os.environ.items() if k not in ("RAY_ADDRESS", ENABLE_CLUSTER_ENV)}
    run = subprocess.run([sys.executable, "-c", PROBE], cwd=ROOT, env=env, capture_output=True,
                         text=True, timeout=240)
    lines = [line for line in run.stdout.splitlines() if line.startswith("RESULT:")]
    assert run.returncode == 0 and lines, f"probe failed ({run.returncode}):\n{run.stdout}\n{run.stderr[-4000:]}"
    result = json.loads(lines[-1][len("RESULT:"):])
    listeners = result["listeners"]

    # the forced race: one retry, said on one line, and the failed attempt's GCS is gone
    assert result["attempts"] == 2, result
    assert len(result["said"]) == 1 and "attempt 1/3" in result["said"][0], result["said"]
    assert "Timed out waiting for file" in result["said"][0] and "\n" not in result["said"][0]
    assert result["gcs_servers"] == 1, "the failed attempt left its gcs_server behind"

    assert _loopback(result["node_ip"]), result["node_ip"]
    known, exposed = [], []
    for l in listeners:
        if _loopback(l["ip"]):
            continue
        allowed = [ip for prefix, ip in KNOWN_UNBINDABLE.items() if l["name"].startswith(prefix)]
        (known if l["proto"] == "tcp" and l["ip"] in allowed else exposed).append(l)
    assert not exposed, "Ray listens beyond loopback:\n" + "\n".join(
        f'  {l["proto"]} {l["ip"]}:{l["port"]}  pid {l["pid"]} {l["name"]}: {l["cmd"]}' for l in exposed)
    # the known exception is what the comment above says it is: one wildcard socket per replica
    per_pid = {}
    for l in known:
        per_pid[l["pid"]] = per_pid.get(l["pid"], 0) + 1
    assert known and set(per_pid.values()) == {1}, known

    # and the check saw what it is meant to: each port Ray reports, the driver's and a worker's
    # core-worker ports, Serve's controller, proxy and HTTP port
    on_loopback = {l["port"] for l in listeners if _loopback(l["ip"])}
    missing = {name: port for name, port in result["named"].items() if port not in on_loopback}
    assert {"gcs", "node_manager", "object_manager", "metrics_agent", "runtime_env_agent",
            "serve_http"} <= set(result["named"]), result["named"]
    assert not missing, f"not seen listening on loopback: {missing}\n{json.dumps(listeners, indent=1)}"
    # an actor's process title names the method it is running ("ray::ServeController.listen_for_change")
    names = {l["name"].split(".", 1)[0] for l in listeners}
    assert any(l["pid"] == result["driver"] for l in listeners), "the driver's core-worker port"
    assert {"gcs_server", "raylet", "ray::ServeController", "ray::ProxyActor"} <= names, names
    assert any(n.startswith("ray::") and not n.startswith("ray::ServeReplica:")
               and n not in ("ray::DashboardAgent", "ray::RuntimeEnvAgent", "ray::ServeController",
                             "ray::ProxyActor") for n in names), f"no worker process listening: {names}"


# -- the retry logic, with stand-ins for ray.init / ray.shutdown --------------------------------

class FakeRay:
    """ray.init that raises the given errors in turn, then succeeds."""

    def __init__(self, *errors: Exception):
        self.errors = list(errors)
        self.calls: list[dict] = []
        self.env_during: list[str | None] = []
        self.shutdowns = 0

    def init(self, **kwargs):
        self.calls.append(kwargs)
        self.env_during.append(os.environ.get(ENABLE_CLUSTER_ENV))
        if self.errors:
            raise self.errors.pop(0)
        return "context"

    def shutdown(self):
        self.shutdowns += 1


GCS_RACE = RuntimeError("Timed out waiting for file /tmp/ray/session_x/gcs_server_port_abc")
RAYLET_RACE = Exception("The current node timed out during startup. This could happen because some of "
                        "the raylet failed to startup or the GCS has become overloaded.")


def _start(fake: FakeRay, said: list[str], **kw):
    return start_local_ray(init=fake.init, shutdown=fake.shutdown, say=said.append, retry_delay_s=0, **kw)


@pytest.mark.unit
def test_race_is_retried_then_succeeds(monkeypatch):
    monkeypatch.delenv(ENABLE_CLUSTER_ENV, raising=False)
    fake, said = FakeRay(GCS_RACE, RAYLET_RACE), []
    assert _start(fake, said, num_cpus=2) == "context"
    assert len(fake.calls) == 3 and fake.shutdowns == 2
    assert len(said) == 2 and all("\n" not in m for m in said)
    assert "attempt 1/3" in said[0] and "Timed out waiting for file" in said[0]
    assert "attempt 2/3" in said[1] and "timed out during startup" in said[1]
    assert fake.calls[0] == {"address": "local", "include_dashboard": False, "log_to_driver": False,
                             "num_cpus": 2, "_node_ip_address": "127.0.0.1"}
    # the loopback switch is on while ray.init runs, and put back afterwards
    assert fake.env_during == ["0", "0", "0"]
    assert ENABLE_CLUSTER_ENV not in os.environ


@pytest.mark.unit
def test_other_errors_are_not_retried():
    fake, said = FakeRay(ValueError("bad _system_config"), GCS_RACE), []
    with pytest.raises(ValueError, match="bad _system_config"):
        _start(fake, said)
    assert len(fake.calls) == 1 and fake.shutdowns == 0 and said == []


@pytest.mark.unit
def test_gives_up_after_the_last_attempt():
    fake, said = FakeRay(GCS_RACE, GCS_RACE, GCS_RACE), []
    with pytest.raises(RayStartError, match=r"after 3 attempt\(s\).*Timed out waiting for file") as err:
        _start(fake, said)
    assert isinstance(err.value.__cause__, RuntimeError)
    assert len(fake.calls) == 3 and len(said) == 2


@pytest.mark.unit
def test_env_switch_is_restored(monkeypatch):
    monkeypatch.setenv(ENABLE_CLUSTER_ENV, "1")
    fake = FakeRay()
    _start(fake, [])
    assert fake.env_during == ["0"] and os.environ[ENABLE_CLUSTER_ENV] == "1"


@pytest.mark.unit
def test_non_loopback_host_says_so():
    fake, said = FakeRay(), []
    _start(fake, said, host="192.0.2.10")
    assert fake.calls[0]["_node_ip_address"] == "192.0.2.10" and fake.env_during == [None]
    assert len(said) == 1 and "every interface" in said[0]
    fake, said = FakeRay(), []
    _start(fake, said, host="0.0.0.0")
    assert "_node_ip_address" not in fake.calls[0] and len(said) == 1


@pytest.mark.unit
@pytest.mark.parametrize("message, race", [
    ("Timed out waiting for file /tmp/ray/session_1/gcs_server_port_ff", True),
    ("The current node timed out during startup.", True),
    ("Maybe you called ray.init twice by accident?", False),
    ("", False),
])
def test_is_startup_race(message, race):
    assert is_startup_race(RuntimeError(message)) is race


@pytest.mark.unit
def test_attempts_must_be_positive():
    with pytest.raises(ValueError):
        start_local_ray(attempts=0, init=FakeRay().init, shutdown=lambda: None)


@pytest.mark.unit
def test_loopback_names():
    assert all(ray_start.is_loopback(h) for h in ("127.0.0.1", "localhost", "::1", " LOCALHOST "))
    assert not any(ray_start.is_loopback(h) for h in ("0.0.0.0", "::", "192.0.2.2", "127.0.0.2"))
