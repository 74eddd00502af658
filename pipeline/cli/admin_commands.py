"""`saksi audit`, `saksi keys` and `saksi reviews`: the operator's records."""
from __future__ import annotations

import json
import sys

from .. import environment
from ..corpus import DEFAULT_COLLECTION, DataDir



def cmd_audit(args) -> int:
    from dataclasses import asdict

    from ..audit import AuditLog, verify

    root = environment.data_dir(args.data_dir)
    if args.action == "checkpoint":
        report = verify(root)
        if not report.ok:
            print(f"saksi: no checkpoint of a broken log: {report.text()}", file=sys.stderr)
            return 1
        seq, digest = AuditLog(root).last()
        print(json.dumps({"seq": seq, "hash": digest}))
        return 0
    checkpoint = None
    if args.checkpoint is not None:
        try:
            checkpoint = json.loads(args.checkpoint.read_text(encoding="utf-8"))
            int(checkpoint["seq"]), str(checkpoint["hash"])
        except (OSError, ValueError, KeyError, TypeError) as e:
            print(f"saksi: {args.checkpoint}: not a checkpoint ({e})", file=sys.stderr)
            return 2
    home = DataDir(root)
    report = verify(root, lambda collection, trace_id: home.collection(collection or DEFAULT_COLLECTION).traces
                    / f"{trace_id}.json", checkpoint)
    print(json.dumps(asdict(report)) if args.json else report.text())
    return 0 if report.ok else 1


def cmd_keys(args) -> int:
    from ..keys import KeyStore

    store = KeyStore(environment.data_dir(args.data_dir))
    if args.action == "create":
        collections = args.collections or (["*"] if args.role == "admin" else ["default"])
        key, token = store.create(args.role, collections, args.authority, args.name)
        if args.json:
            print(json.dumps({**key.public(), "token": token}, indent=1))
        else:
            print(token)
            print(f"key {key.id}: {key.role} of {', '.join(key.collections)}, uploads at most {key.authority}; "
                  "shown once (only its hash is kept): send it as `Authorization: Bearer …`", file=sys.stderr)
        return 0
    if args.action == "revoke":
        if not args.id:
            print("saksi: keys revoke needs a key id (see `saksi keys ls`)", file=sys.stderr)
            return 2
        key = store.revoke(args.id)
        print(f"key {key.id} revoked ({key.revoked})")
        return 0
    keys = store.keys()
    if args.json:
        print(json.dumps([k.public() for k in keys], indent=1))
    elif not keys:
        print(f"no keys in {store.path} (create one: saksi keys create --role reader)")
    else:
        for k in keys:
            state = f"revoked {k.revoked}" if k.revoked else "active"
            print(f"{k.id}  {k.role:<8} {','.join(k.collections):<20} uploads≤{k.authority:<13} {state:<10} "
                  f"created {k.created}{'  ' + k.name if k.name else ''}")
    return 0


def cmd_reviews(args) -> int:
    from ..reviews import Review, ReviewStore

    if args.action == "ls" and (args.format or args.output):
        print("saksi: --format and --output are for `reviews export`", file=sys.stderr)
        return 2
    if args.action == "export" and args.json:
        print("saksi: `reviews export` writes JSONL (the default) or --format csv; --json is for `reviews ls`",
              file=sys.stderr)
        return 2
    store = ReviewStore(environment.data_dir(args.data_dir))
    reviews = store.all(args.collection) if args.all else store.latest(args.collection)
    if args.action == "ls":
        if args.json:
            print(json.dumps([r.model_dump(mode="json") for r in reviews], ensure_ascii=False, indent=1))
        elif not reviews:
            print(f"no reviews in {store.path} (decide on claims in the web page: saksi serve)")
        else:
            for r in reviews:
                claim = r.claim_text if len(r.claim_text) <= 120 else r.claim_text[:119] + "…"
                decision = f"{r.decision} ({r.reason})" if r.reason else r.decision
                print(f"{r.at}  {r.by:<16} {r.collection:<12} {r.trace_id[:8]} claim {r.claim:<3} {decision:<26} "
                      f"{claim!r}{'  — ' + ' '.join(r.note.split()) if r.note else ''}")
        return 0
    if args.format == "csv":
        import csv
        import io

        buffer = io.StringIO()
        writer = csv.DictWriter(buffer, fieldnames=list(Review.model_fields))
        writer.writeheader()
        for r in reviews:
            row = {**r.model_dump(mode="json"), "chunk_ids": ";".join(r.chunk_ids)}
            writer.writerow({k: _cell(v) for k, v in row.items()})
        text = buffer.getvalue()
    else:
        text = "".join(json.dumps(r.model_dump(mode="json"), ensure_ascii=False) + "\n" for r in reviews)
    if args.output:
        args.output.write_text(text, encoding="utf-8")
        print(f"wrote {len(reviews)} review(s) to {args.output}", file=sys.stderr)
    else:
        sys.stdout.write(text)
    return 0


def _cell(value):
    """A CSV cell a spreadsheet shows as text: one that begins like a formula (=, +, -, @, tab, CR) gets a leading
    apostrophe (OWASP's advice against CSV injection: `=HYPERLINK(…)` in a reviewer's note is not run)."""
    if isinstance(value, str) and value[:1] in ("=", "+", "-", "@", "\t", "\r"):
        return "'" + value
    return value
