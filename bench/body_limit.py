"""Does Ray Serve's HTTP proxy buffer a whole request body before our replica can refuse it?

One local Ray + Serve (127.0.0.1), two applications on the same proxy, each one replica of
a minimal `@serve.ingress` FastAPI app with one endpoint shaped like POST /v1/ingest (a
pydantic model of files with base64 content; the upload size is checked after parsing):

- `limited`: the app with serve/body_limit.py's `BodyLimit` (default_limits(2,000,000):
  about 2.7 MB for POST …/ingest);
- `peer`: the same app without it (the current behaviour: parse everything, then 413);
- `busy`: `limited` with max_ongoing_requests=1, its one slot held by a 3 s request while
  the big body arrives (a replica that is busy or overloaded, as under load).

For each, a ~100 MB JSON body is sent twice, once with `Content-Length` and once chunked.
The client stops sending as soon as a response arrives. Reported per request: status, time
to the response, bytes the client got to send before it, and the peak RSS growth (VmHWM,
reset before each request) of the ProxyActor, the replica (ServeReplica) and the raylet
(which hosts the object store that carries the body from proxy to replica).

Every case gets a fresh Serve (proxy and replica): memory freed by an earlier big request
could be reused without showing as growth.

    .venv/bin/python bench/body_limit.py [--mb 100] [--repeat 1] [--out bench/results/body_limit.json]
"""

import argparse
import http.client
import json
import os
import select
import socket
import sys
import threading
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

MAX_UPLOAD_BYTES = 2_000_000
MIB = 1024 * 1024
HOLD_S = 3.0


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# --- the served app ---------------------------------------------------------------------------

def build_deployment(with_limit: bool, max_ongoing_requests: int = 5):
    from fastapi import FastAPI
    from fastapi.responses import JSONResponse
    from pydantic import BaseModel
    from ray import serve

    from serve.body_limit import BodyLimit, default_limits

    class UploadFile(BaseModel):
        name: str
        content_base64: str

    class IngestRequest(BaseModel):
        files: list[UploadFile]

    app = FastAPI()
    if with_limit:
        app.add_middleware(BodyLimit, limit_for=default_limits(MAX_UPLOAD_BYTES))

    @serve.deployment(num_replicas=1, max_ongoing_requests=max_ongoing_requests,
                      ray_actor_options={"num_cpus": 0.5})
    @serve.ingress(app)
    class Ingest:
        @app.get("/v1/hold")
        async def hold(self, s: float = 3.0):
            import asyncio
            await asyncio.sleep(s)  # keeps the replica's one slot busy (the `busy` case)
            return {"held_s": s}

        @app.post("/v1/ingest")
        async def ingest(self, body: IngestRequest):
            import base64
            size = sum(len(base64.b64decode(f.content_base64)) for f in body.files)
            if size > MAX_UPLOAD_BYTES:
                return JSONResponse({"error": {"type": "too_large", "message": f"{size} bytes uploaded; the limit "
                                                                                 f"is {MAX_UPLOAD_BYTES}"}}, 413)
            return {"bytes": size}

    return Ingest.bind()


# --- memory of the Ray processes ----------------------------------------------------------------

def _status_kb(pid: int, key: str) -> int:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    raise KeyError(key)


class Watch:
    """Peak RSS growth of some processes over one request (VmHWM reset at the start)."""

    def __init__(self, pids: dict[str, int]):
        self.pids = pids

    def __enter__(self):
        self.base = {}
        for name, pid in self.pids.items():
            with open(f"/proc/{pid}/clear_refs", "w") as f:
                f.write("5")  # resets VmHWM to the current RSS
            self.base[name] = _status_kb(pid, "VmRSS")
        return self

    def result(self) -> dict:
        out = {}
        for name, pid in self.pids.items():
            peak, now = _status_kb(pid, "VmHWM"), _status_kb(pid, "VmRSS")
            out[name] = {"peak_growth_mb": round((peak - self.base[name]) / 1024, 1),
                         "retained_mb": round((now - self.base[name]) / 1024, 1)}
        return out

    def __exit__(self, *exc):
        return False


def actor_pids() -> list[tuple[str, int]]:
    """(class name, pid) of the live actors: the state API when a dashboard serves it, else
    the GCS actor table (this bench runs without a dashboard)."""
    import ray
    try:
        from ray.util.state import list_actors
        actors = list_actors(address=ray.get_runtime_context().gcs_address,
                             filters=[("state", "=", "ALIVE")], limit=1000, raise_on_missing_output=False)
        return [(a.class_name or "", a.pid) for a in actors]
    except Exception:  # ServerUnavailable without the dashboard's API server
        from ray._private import state
        return [(a["ActorClassName"], a["Pid"]) for a in state.actors().values() if a["State"] == "ALIVE"]


def find_pids(apps: list[str]) -> dict[str, int]:
    import psutil

    pids = {}
    for cls, pid in actor_pids():
        if cls.endswith("ProxyActor"):
            pids["proxy"] = pid
        for app_name in apps:
            if cls.startswith("ServeReplica:") and cls.split(":")[1] == app_name:
                pids[f"replica_{app_name}"] = pid
    # the raylet of this single-node cluster (it hosts the object store) is the workers' parent
    parent = psutil.Process(pids["proxy"]).parent()
    if parent is not None and "raylet" in parent.name():
        pids["raylet"] = parent.pid
    return pids


# --- the client -------------------------------------------------------------------------------

def make_body(total: int) -> bytes:
    head, tail = b'{"files":[{"name":"big.pdf","content_base64":"', b'"}]}'
    n = total - len(head) - len(tail)
    return head + b"A" * (n - n % 4) + tail


def post(port: int, path: str, body: bytes, chunked: bool, piece: int = MIB, timeout: float = 120) -> dict:
    """Send `body`; stop sending the moment a response is readable. Nothing is buffered
    client-side beyond one piece."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    conn.putrequest("POST", path, skip_accept_encoding=True)
    conn.putheader("Content-Type", "application/json")
    if chunked:
        conn.putheader("Transfer-Encoding", "chunked")
    else:
        conn.putheader("Content-Length", str(len(body)))
    t0 = time.perf_counter()
    conn.endheaders()
    sock = conn.sock
    sock.setblocking(False)
    view = memoryview(body)
    sent, stopped, send_error = 0, "body complete", None

    def frames():
        for i in range(0, len(body), piece):
            data = view[i:i + piece]
            yield (b"%x\r\n" % len(data) + bytes(data) + b"\r\n") if chunked else data, len(data)
        if chunked:
            yield b"0\r\n\r\n", 0

    try:
        for frame, payload in frames():
            frame, off = memoryview(frame), 0
            while off < len(frame):
                readable, writable, _ = select.select([sock], [sock], [], timeout)
                if readable:
                    stopped = "response arrived"
                    break
                if not writable:
                    raise TimeoutError("the server stopped reading")
                try:
                    off += sock.send(frame[off:])
                except BlockingIOError:
                    continue
            if stopped != "body complete":
                break
            sent += payload
    except (BrokenPipeError, ConnectionResetError, TimeoutError) as e:
        stopped, send_error = "send failed", repr(e)
    sock.setblocking(True)
    sock.settimeout(timeout)
    result = {"body_bytes": len(body), "chunked": chunked, "sent_bytes_before_response": sent,
              "sending": stopped, "send_error": send_error}
    try:
        resp = conn.getresponse()
        data = resp.read()
        result.update(status=resp.status, seconds=round(time.perf_counter() - t0, 3),
                      error_type=(json.loads(data).get("error") or {}).get("type") if data else None,
                      connection=resp.getheader("connection"))
    except (OSError, http.client.HTTPException) as e:
        result.update(status=None, seconds=round(time.perf_counter() - t0, 3), read_error=repr(e))
    finally:
        conn.close()
    return result


# --- the measurement --------------------------------------------------------------------------

APPS = {"limited": True, "peer": False, "busy": True}  # name: with the middleware


def one_case(name: str, chunked: bool, body: bytes) -> dict:
    """A fresh Serve (proxy and replica) for one request: nothing freed by an earlier big
    request can be reused without showing as growth."""
    from ray import serve

    port = free_port()
    serve.start(http_options={"host": "127.0.0.1", "port": port})
    try:
        serve.run(build_deployment(APPS[name], max_ongoing_requests=1 if name == "busy" else 5),
                  name=name, route_prefix=f"/{name}")
        pids = find_pids([name])
        warm = post(port, f"/{name}/v1/ingest", make_body(100_000), chunked=chunked)  # handles, connections
        assert warm["status"] == 200, warm
        time.sleep(1.0)
        holder = None
        if name == "busy":  # the replica's only slot is taken for HOLD_S: the request waits in the proxy
            holder = threading.Thread(target=lambda: urllib.request.urlopen(
                f"http://127.0.0.1:{port}/busy/v1/hold?s={HOLD_S}", timeout=60).read())
            holder.start()
            time.sleep(0.3)
        with Watch(pids) as w:
            r = post(port, f"/{name}/v1/ingest", body, chunked=chunked)
            time.sleep(0.5)  # let the proxy and replica finish with the request
            mem = w.result()
        if holder is not None:
            holder.join()
        after = post(port, f"/{name}/v1/ingest", make_body(100_000), chunked=False)["status"]
        return {"app": name, "middleware": APPS[name], **r, "proxy": mem["proxy"],
                "replica": mem[f"replica_{name}"], "raylet": mem.get("raylet"), "small_request_after": after}
    finally:
        serve.shutdown()


def run(mb: int, repeat: int) -> dict:
    import ray

    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        body = make_body(mb * 1_000_000)
        rows = []
        for _ in range(repeat):
            for name in APPS:
                for chunked in (False, True):
                    row = one_case(name, chunked, body)
                    rows.append(row)
                    print(json.dumps(row), flush=True)
        return {"body_mb": mb, "max_upload_bytes": MAX_UPLOAD_BYTES,
                "ingest_body_limit": 4 * -(-MAX_UPLOAD_BYTES // 3) + 64 * 1024, "hold_s": HOLD_S,
                "ray": ray.__version__, "cpus": os.cpu_count(), "rows": rows}
    finally:
        ray.shutdown()


def table(result: dict) -> str:
    head = (f"{'app':8} {'body':8} {'status':>6} {'secs':>7} {'sent MB':>8} {'proxy MB':>9} {'replica MB':>11} "
            f"{'raylet MB':>10}")
    lines = [head, "-" * len(head)]
    for r in result["rows"]:
        lines.append(f"{r['app']:8} {'chunked' if r['chunked'] else 'length':8} {str(r['status']):>6} "
                     f"{r['seconds']:>7.2f} {r['sent_bytes_before_response'] / 1e6:>8.1f} "
                     f"{r['proxy']['peak_growth_mb']:>9.1f} {r['replica']['peak_growth_mb']:>11.1f} "
                     f"{(r['raylet'] or {}).get('peak_growth_mb', float('nan')):>10.1f}")
    lines.append("MB columns: peak RSS growth (VmHWM) during the request; 'sent MB': body the client got "
                 "to send before the response")
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mb", type=int, default=100, help="request body size, MB (10^6 bytes)")
    ap.add_argument("--repeat", type=int, default=1, help="runs of each case")
    ap.add_argument("--out", type=Path, default=ROOT / "bench" / "results" / "body_limit.json")
    args = ap.parse_args()
    result = run(args.mb, args.repeat)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=1))
    print(table(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
