"""`saksi eval`: the contract measured on a dataset, and reviewers' decisions as one."""
from __future__ import annotations

import json
import sys
from pathlib import Path

from .. import environment
from ..config import load_profile



def cmd_eval(args) -> int:
    from ..eval.report import adversarial_text, eval_text, json_view

    if args.compare:
        return _eval_compare(args)
    profile = load_profile(args.profile)
    say = (lambda m: None) if args.json else (lambda m: print(m, file=sys.stderr))
    if args.leave_out is not None and (args.reviews or args.adversarial):
        print("saksi: --leave-out goes with a DATASET whose questions carry a 'reference'; not with --reviews or "
              "--adversarial (it asks the dataset's corpus, or a copy of --corpus, without the law)", file=sys.stderr)
        return 2
    if args.level != "pasal":
        print("saksi: --level goes with --compare", file=sys.stderr)
        return 2
    if args.reviews:
        return _eval_reviews(args, profile, say)
    if args.data_dir or (args.collection and not args.corpus):
        print("saksi: --data-dir goes with --reviews, --collection with --reviews or --corpus (a dataset's corpus is "
              "--corpus DATA_DIR [--collection NAME])", file=sys.stderr)
        return 2
    if args.adversarial:
        from ..eval.adversarial import run_adversarial

        if args.dataset or args.corpus or args.limit:
            print("saksi: --adversarial runs its own catalogue; it takes no dataset, --corpus or --limit",
                  file=sys.stderr)
            return 2
        report = run_adversarial(profile, args.out or Path("eval-runs") / "adversarial", progress=say)
        print(json.dumps(report, ensure_ascii=False, indent=1) if args.json else adversarial_text(report))
        return 0 if report["passed"] else 1
    if args.dataset is None:
        print("saksi: eval needs a DATASET (or --adversarial, or --reviews)", file=sys.stderr)
        return 2
    from ..eval.runner import run_eval

    from ..eval.receipts import law_slug

    name = [x for x in (args.dataset.parent.name, args.dataset.stem) if x]
    if args.leave_out is not None:
        name.append(f"without-{law_slug(args.leave_out)}")
    out = args.out or Path("eval-runs") / "-".join(name)
    corpus = args.corpus
    if corpus is not None and args.collection:
        from ..corpus import DataDir
        from ..errors import UnknownCollectionError

        try:
            corpus = DataDir(corpus).collection(args.collection)
        except UnknownCollectionError as e:
            print(f"saksi: {e}", file=sys.stderr)
            return 2
    report = run_eval(args.dataset, profile, out, limit=args.limit, corpus_dir=corpus, progress=say,
                      leave_out=args.leave_out)
    print(json.dumps(json_view(report), ensure_ascii=False, indent=1) if args.json else eval_text(report, out))
    return 0 if all(report["contract"].values()) else 1


def _eval_compare(args) -> int:
    """`eval --compare A B`: two runs' rows question by question; 0 compared, 2 unreadable or not comparable."""
    from ..eval.compare import RunRowsError, compare, compare_text, load_rows

    if args.dataset or args.corpus or args.limit or args.adversarial or args.reviews or args.out or args.leave_out:
        print("saksi: --compare reads two runs' directories; it takes no dataset, --corpus, --limit, --out, "
              "--leave-out, --adversarial or --reviews", file=sys.stderr)
        return 2
    a, b = args.compare
    try:
        result = compare(load_rows(a), load_rows(b), args.level)
    except RunRowsError as e:
        print(f"saksi: {e}", file=sys.stderr)
        return 2
    except (KeyError, TypeError, AttributeError) as e:  # a row of another shape than `saksi eval` writes
        print(f"saksi: {a} or {b}: a row is not in the shape `saksi eval` writes ({e.__class__.__name__}: {e})",
              file=sys.stderr)
        return 2
    print(json.dumps(result, ensure_ascii=False, indent=1) if args.json else compare_text(result, str(a), str(b)))
    return 0


def _eval_reviews(args, profile, say) -> int:
    """`eval --reviews`: 0 no rejected claim is shown today, 1 one is (or could not be checked), 2 nothing to replay."""
    from ..eval.reviews import replay_reviews
    from ..reviews import ReviewStore

    if args.dataset or args.corpus or args.limit or args.adversarial or args.out:
        print("saksi: --reviews replays the data directory's reviews; it takes no dataset, --corpus, --limit, --out "
              "or --adversarial", file=sys.stderr)
        return 2
    root = environment.data_dir(args.data_dir)
    latest = ReviewStore(root).latest(args.collection)
    if not any(r.decision == "rejected" for r in latest):
        where = f"{root}" + (f" (collection {args.collection})" if args.collection else "")
        print(f"saksi: no rejected reviews to replay in {where}: reject a claim in the web page (`saksi serve`) "
              "first", file=sys.stderr)
        return 2
    report = replay_reviews(root, profile, latest, progress=say)
    print(json.dumps(report.as_dict(), ensure_ascii=False, indent=1) if args.json else report.text())
    return 0 if report.passed else 1
