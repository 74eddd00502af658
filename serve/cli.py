"""The `saksi` command: pipeline's commands plus `serve`, `batch` and `bulk-ingest`, which need Ray.

Kept here so `pipeline/` never imports ray: this module extends pipeline.cli's parser.
"""
from __future__ import annotations

import argparse
import signal
import sys
import time
from pathlib import Path

from pipeline import cli as base
from pipeline import environment
from pipeline.config import DEFAULT_PROFILE


def _extend(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("serve", help="run the Ray Serve application locally (HTTP API on --host:--port)")
    p.add_argument("--profile", default=DEFAULT_PROFILE, choices=["lite", "full-cpu", "gpu"],
                   help="configs/<profile>.yaml and configs/serve/<profile>.yaml (default: lite)")
    p.add_argument("--data-dir", help="corpus directory (default: $SAKSI_DATA_DIR or ./data)")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=8000)
    p.add_argument("--ray-node-ip", default="127.0.0.1", metavar="IP",
                   help="IP address of the local Ray node. With 127.0.0.1 (default) every port Ray's own "
                        "processes open (GCS, raylet, object manager, workers, agents, metrics) listens on "
                        "loopback only; with any other address Ray advertises it but listens on every "
                        "interface (Ray cannot bind one chosen interface). The HTTP API follows --host.")
    p.add_argument("--print-config", action="store_true",
                   help="print the Ray Serve config (for `serve deploy` and KubeRay serveConfigV2) and exit")
    p.add_argument("-v", "--verbose", action="store_true")

    p = sub.add_parser("batch", help="answer a JSONL file of questions as a Ray Data job")
    p.add_argument("questions", type=Path, help='JSONL: {"id", "question", "lang"?} per line')
    p.add_argument("--out", type=Path, required=True, help="answers.jsonl (input order)")
    p.add_argument("--profile", default=DEFAULT_PROFILE)
    p.add_argument("--data-dir", help="corpus directory (default: $SAKSI_DATA_DIR or ./data)")
    p.add_argument("--concurrency", type=int, default=1, help="actors in the answering pool (lite: 1)")
    p.add_argument("--batch-size", type=int, default=8)
    p.add_argument("-v", "--verbose", action="store_true")

    p = sub.add_parser("bulk-ingest", help="ingest like `saksi ingest`, parsing and embedding as a Ray Data job",
                       description="Same corpus as `saksi ingest`; files are parsed by Ray tasks and embedded by "
                                   "a pool of actors, while the writes stay in this process (Milvus Lite lets one "
                                   "process own its file). On a cluster: ray job submit --working-dir . -- "
                                   "saksi bulk-ingest corpus/ --concurrency 4. @FILE reads paths from FILE, one per "
                                   "line, in the order given (an interrupted job is resumed by running it again: "
                                   "what it committed is unchanged and skipped).",
                       fromfile_prefix_chars="@")
    p.add_argument("paths", nargs="+", type=Path, help="files and directories, or @FILE (one path per line)")
    p.add_argument("--concurrency", type=int, default=1, help="actors in the embedding pool")
    p.add_argument("--batch-size", type=int, default=64, help="chunks per embedding batch")
    p.add_argument("--rebuild", action="store_true", help="drop the data directory's corpus and indexes first")
    p.add_argument("--strict", action="store_true", help="exit 1 if any file was skipped")
    p.add_argument("--json", action="store_true", help="print the ingest report as JSON")
    base.common_options(p)


def cmd_serve(args) -> int:
    import yaml

    from .app import build_app, serve_config_v2

    data_dir = environment.data_dir(args.data_dir)
    if args.print_config:
        print(yaml.safe_dump(serve_config_v2(args.profile, str(data_dir)), sort_keys=False))
        return 0
    import ray
    from ray import serve

    from pipeline.config import load_profile
    from pipeline.corpus import check_collections
    from pipeline.keys import KeyStore

    from .config import load_serve_config
    from .ray_start import start_local_ray

    # say what is wrong before starting a cluster; closing releases the Milvus Lite files,
    # which the Retriever replica then owns (one process per file)
    collections, damaged = check_collections(data_dir, load_profile(args.profile),
                                             say=lambda m: print(f"saksi: {m}", file=sys.stderr, flush=True))
    for name, problem in damaged.items():  # out of service; the others serve (readyz names it)
        print(f"saksi: collection {name!r} is out of service: {problem}", file=sys.stderr, flush=True)
    if not KeyStore(data_dir).any():
        print(f"saksi: no API keys in {data_dir}: every request but /healthz will get 401; create one with "
              f"`saksi keys create --role reader --data-dir {data_dir}`", file=sys.stderr, flush=True)
    # Ray's internal ports on loopback, and another try or two when a slow machine hits Ray's
    # start-up timeouts (serve/ray_start.py says which ports, and why)
    # a one-machine node offers the custom resources the profile's deployments are pinned by (gpu: the GPU classes)
    resources = load_serve_config(args.profile).custom_resources()
    start_local_ray(args.ray_node_ip, log_to_driver=args.verbose, say=lambda m: print(m, file=sys.stderr, flush=True),
                    **({"resources": resources} if resources else {}))
    serve.start(http_options={"host": args.host, "port": args.port})
    serve.run(build_app(args.profile, data_dir), name="saksi", route_prefix="/")
    print(f"saksi is serving {data_dir} ({', '.join(f'{n}: {c} chunks' for n, c in collections.items())}) at "
          f"http://{args.host}:{args.port} (docs: /docs; Ctrl-C stops)", flush=True)
    stop = []
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.append(1))
    try:
        while not stop:
            time.sleep(0.5)
    except KeyboardInterrupt:
        pass
    serve.shutdown()
    ray.shutdown()
    return 0


def cmd_batch(args) -> int:
    from .batch import run_batch

    run_batch(args.questions, args.out, args.profile, environment.data_dir(args.data_dir), args.concurrency,
              args.batch_size, progress=lambda m: print(m, file=sys.stderr))
    return 0


def cmd_bulk_ingest(args) -> int:
    """Prints what `saksi ingest` prints, and exits as it does."""
    from pipeline.progress import IngestBar

    from .bulk_ingest import bulk_ingest, cluster_cpus, throughput_line

    target = base.collection_dir(args, create=True)
    # as `saksi ingest`: a bar (documents, passages, passages/s, time left) on a terminal, the same line
    # every few seconds in a log; with --json neither
    bar = None if args.json else IngestBar(sys.stderr)
    progress = (lambda m: None) if bar is None else bar.say
    started = time.perf_counter()
    try:
        report = bulk_ingest(args.paths, args.profile, target, args.concurrency, args.batch_size,
                             rebuild=args.rebuild, progress=progress, meter=bar)
    finally:
        if bar is not None:
            bar.close()
    if not args.json:
        print(throughput_line(report.embedded, report.from_cache, time.perf_counter() - started, cluster_cpus()),
              file=sys.stderr)
    return base.print_ingest_report(target.root, report, args.json, args.strict)


def main(argv: list[str] | None = None) -> int:
    return base.main(argv, extend=_extend, commands={"serve": cmd_serve, "batch": cmd_batch,
                                                     "bulk-ingest": cmd_bulk_ingest})


if __name__ == "__main__":
    sys.exit(main())
