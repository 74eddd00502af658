"""Summarise one `POST /v1/answer` (or `saksi ask --json`) response read from stdin, for the demo."""
import json
import sys
import textwrap

r = json.load(sys.stdin)
if "error" in r:
    print(f"error {r['error']['type']}: {r['error']['message']}")
    sys.exit(1)
wrap = lambda s, ind: textwrap.fill(" ".join(str(s).split()), 100, initial_indent=ind, subsequent_indent=ind)
if r["outcome"] == "answer":
    as_of = r.get("as_of")
    print("ANSWER" + (" (after a corrective retry)" if r["retried"] else "")
          + (f" as of {as_of['date']} ({as_of['source']})" if as_of else ""))
else:
    print(f"REFUSAL ({r['reason_code']}): {r['reason']}")
    if r["missing_categories"]:
        from pipeline.decision import category_words  # the codes in words, in the answer's language

        print(f"  missing evidence: {', '.join(category_words(m, r['lang']) for m in r['missing_categories'])}")
for c in r["claims"]:
    head = f"[{c['band']} {c['confidence']}]" if c["status"] == "supported" else "[NOT SUPPORTED]"
    print(wrap(f"{head} {c['text']}", "  "))
    st = c.get("standing")
    if st and st["state"] != "in_force":  # history, not yet in force, or unknown: say so, with what decides it
        edge = st.get("edge")
        print(wrap(f"{st['state'].replace('_', ' ')} on {st['on']}" + (f": {edge['kind']} by {edge['source_path']}"
                                                                        if edge else ""), "      "))
    for q in c["citations"]:
        print(wrap(f"“{q['quote']}” — {q.get('path') or q['document'] + ', ' + q['location']}", "      "))
        if q.get("uploaded_by") not in (None, "local"):  # an API upload, not the operator's own record
            print(wrap(f"UPLOADED by {q['uploaded_by']} at {q.get('uploaded_at')}; authority {q.get('authority')}",
                       "        "))
for x in r.get("conflicts", []):
    print(wrap(f"conflict: {x['detail']}", "  "))
for n in r["nearest"]:
    print(wrap(f"nearest {n['score']}: {n.get('path') or n['document'] + ', ' + n['location']}", "  "))
print(f"  trace: {r['trace_id']}  (GET /v1/traces/{r['trace_id']})")
