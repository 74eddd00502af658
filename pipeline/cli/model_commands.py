"""`saksi train`, `saksi models`, `saksi doctor` and `saksi schema`."""
from __future__ import annotations

import json
import sys

from ..config import load_profile



def cmd_train(args) -> int:
    from ..answer_reader.model import DEFAULT_WEIGHTS, WEIGHTS_DIR
    from ..answer_reader.training import train_reader
    from ..answer_reader.training_report import progress_bar, validation_text

    profile = load_profile(args.profile)
    if args.what == "cross-encoder":
        return _train_cross_encoder(args, profile)
    name = profile.settings.generator.reader
    out = args.out or (WEIGHTS_DIR / f"{name}.json" if name and "/" not in name else DEFAULT_WEIGHTS)
    train = [args.data / "idk_mrc" / "train.json", args.data / "tydiqa_id" / "train.json", *args.prose]
    valid = [args.data / "idk_mrc" / "valid.json", args.data / "tydiqa_id" / "valid.json"]
    laws = [args.data / "peraturan" / "uu.tar.xz", *args.regulations]
    missing = [str(p) for p in (*train, *valid, *laws) if not p.is_file()]
    if missing:
        print(f"saksi: training data not found: {', '.join(missing)} (pass --data DIR, and --regulations paths "
              "that exist)", file=sys.stderr)
        return 2
    import tarfile

    unreadable = [str(p) for p in laws if not tarfile.is_tarfile(p)]
    if unreadable:  # found before the prose examples are built, not an hour into the training
        print(f"saksi: not a tar archive of regulations: {', '.join(unreadable)} (scripts/pp_archive.py builds one)",
              file=sys.stderr)
        return 2
    if not args.regulations:
        print("saksi: training on the laws alone; the committed reader was also trained on the Government Regulations "
              "of training-data/pp.tar.xz (--regulations; pipeline/answer_reader/weights/README.md), so these weights will "
              "differ from it", file=sys.stderr)
    if not args.prose:
        print("saksi: no --prose set; the committed reader also read XQuAD's English questions "
              "(training-data/xquad.en.json: pipeline/answer_reader/weights/README.md), so these weights will differ from it",
              file=sys.stderr)
    spec = train_reader(train, valid, profile, out, limit=args.limit,
                        progress=lambda m: print(m, file=sys.stderr), bar=progress_bar, laws=laws, law_limit=args.limit)
    print(validation_text(spec, out))
    return 0


def _train_cross_encoder(args, profile) -> int:
    from ..audit import file_hash
    from ..answer_reader.neural import WEIGHTS_DIR

    ce = profile.settings.generator.cross_encoder
    out = args.out or (WEIGHTS_DIR / f"{ce.weights if ce else 'cross-encoder-lite'}.bin")
    laws = args.data / "peraturan" / "uu.tar.xz"
    missing = [str(p) for p in (laws, *args.regulations) if not p.is_file()]
    if missing:
        print(f"saksi: training data not found: {', '.join(missing)} (pass --data DIR)", file=sys.stderr)
        return 2
    try:
        from ..answer_reader import neural_training
        import torch  # noqa: F401
    except ImportError:
        print("saksi: training the cross-encoder needs torch: pip install -e '.[models]'", file=sys.stderr)
        return 2
    wanted = args.limit or args.laws
    if wanted < 0 or args.questions < 0:
        print("saksi: --laws and --questions must be 0 (all) or more", file=sys.stderr)
        return 2
    if args.mine_only and not args.mined:
        print("saksi: --mine-only needs --mined FILE (where the rows go)", file=sys.stderr)
        return 2
    say = lambda m: print(m, file=sys.stderr)  # noqa: E731
    archives = [laws, *args.regulations]
    if args.mined and args.mined.is_file():
        try:
            rows, meta = neural_training.load_rows(args.mined)
        except (OSError, ValueError) as e:
            print(f"saksi: {e}", file=sys.stderr)
            return 2
        n_laws, laws_sha = meta.get("laws", 0), meta.get("archive_sha256", "")
        say(f"{len(rows)} mined questions read from {args.mined}")
    else:
        rows, n_laws = neural_training.mine(archives, profile, wanted or None, progress=say)
        laws_sha = file_hash(laws)
        if args.mined:
            neural_training.save_rows(args.mined, rows, {"laws": n_laws, "archives": [a.name for a in archives],
                                                         "archive_sha256": laws_sha})
            say(f"{len(rows)} mined questions written to {args.mined}")
    if not rows:
        print(f"saksi: no question could be mined from {n_laws} laws: nothing to train on (more --laws)",
              file=sys.stderr)
        return 2
    if args.mine_only:
        return 0
    header = neural_training.train(rows, out, questions=args.questions or None, laws=n_laws,
                                   archive_sha256=laws_sha, storage=args.storage, progress=say)
    t = header["training"]
    print(f"{out}: {t['questions']} questions from {n_laws} laws ({t['pairs']} pairs), final loss {t['final_loss']}, "
          f"digest {header['digest'][:12]}")
    return 0


def cmd_models(args) -> int:
    from ..models import check_profile

    report = check_profile(load_profile(args.profile))
    if args.json:
        print(json.dumps(report, ensure_ascii=False, indent=1))
    else:
        print(f"profile {report['profile']}:")
        for m in report["models"]:
            where = f"found at {m['path']}" if m["available"] else f"MISSING — {m['error']}"
            print(f"  {m['role']:<9} {m['backend']:<21} {m['name']}\n            {where}")
        for lib in report["libraries"]:
            state = "installed" if lib["available"] else f"MISSING — {lib['install']}"
            print(f"  library   {lib['module']:<21} needed by {', '.join(lib['needed_by'])}: {state}")
        for note in report["notes"]:
            print(f"  note      {note}")
        if not report["models"] and not report["libraries"]:
            print("  no models to fetch: this profile runs on what the package ships")
        print("all available" if report["ok"] else "not ready: fetch or install what is marked MISSING")
    return 0 if report["ok"] else 1


def cmd_doctor(args) -> int:
    from .doctor import doctor_text, preflight, preflight_text, run_doctor, write_report

    profile = load_profile(args.profile)
    check = preflight(profile)  # before loading anything: what `saksi models check` says, and the GPU
    if not check["ok"]:
        print(preflight_text(check))
        write_report({"ok": False, "stage": "preflight", "preflight": check}, args.out)
        print(f"saksi: doctor stopped before loading any model: the profile {profile.settings.profile!r} is not "
              f"ready on this machine (report: {args.out})", file=sys.stderr)
        return 1
    report = run_doctor(profile, args.data_dir, progress=lambda m: print(m, file=sys.stderr))
    report = {"ok": True, "stage": "done", "preflight": check, **report}
    write_report(report, args.out)
    print(doctor_text(report))
    print(f"report: {args.out}")
    return 0


def cmd_schema(args) -> int:
    if args.what == "trace":
        from ..trace import trace_schema

        print(json.dumps(trace_schema(), indent=1))
    else:
        from ..claims import claim_json_schema

        print(json.dumps(claim_json_schema(), indent=1))
    return 0
