#!/usr/bin/env bash
# `make demo`: ingest the sample corpus, serve it with Ray Serve (lite profile), ask three
# questions over HTTP with curl, then print the web page's address and keep serving it until
# Ctrl-C (DEMO_KEEP_SERVING=0: stop after the questions).
set -euo pipefail
BIN=.venv/bin
DATA=${DEMO_DATA:-data/sample}
PORT=${PORT:-8000}
URL="http://127.0.0.1:$PORT"
# Ctrl-C at any point (make demo runs this as the terminal's foreground group: scripts/foreground.py) stops what
# runs, the server with it, and says goodbye: exit 0
trap 'echo; echo "saksi demo stopped; goodbye."; exit 0' INT

"$BIN/saksi" ingest corpus/sample --data-dir "$DATA" \
  --description "Empat dokumen fiktif untuk mencoba saksi (peraturan, standar dan pedoman ilustratif): bukan ketentuan yang berlaku." \
  --example "Berapa tarif pajak penghasilan atas persewaan tanah dan bangunan?" \
  --example "Berapa tarif pajak penghasilan atas persewaan tanah dan bangunan pada tahun 2024?" \
  --example "What is the penalty for filing the SPT Masa late?"
# the real regulations of the shared data (../shared/data, beside the checkout), when present, go into
# a collection of their own, so the page has both to choose from (DEMO_REGULATIONS=none: skip them;
# the first time this embeds ~900 passages: a few minutes on 2 cores, then only what changed)
REGS=${DEMO_REGULATIONS:-../shared/data/regulations/pmk}
if [ "$REGS" != "none" ] && [ -d "$REGS" ]; then
  echo "ingesting the regulations in $REGS into the collection 'regulations'"
  "$BIN/saksi" ingest "$REGS" --data-dir "$DATA" --collection regulations \
    --description "Peraturan Menteri Keuangan yang sebenarnya (2024–2025): kepabeanan, cukai, pajak, anggaran." \
    --example "Berapa lama bea masuk tindakan pengamanan atas impor kain tenunan dari kapas dikenakan?" \
    --example "Siapa yang menerbitkan Surat Penetapan Kelebihan Pembayaran Cukai (SPKPC)?" \
    --example "When does PMK 99/2025 on customs duty and excise exemption for imported gifts and grants take effect?"
fi
# every endpoint but /healthz needs an API key: the demo makes a reader key of every collection once
# and keeps it (only its hash is in $DATA/keys.json; the token itself in $DATA/demo.key, readable by
# you alone)
KEYFILE="$DATA/demo.key"
still_active() {  # the key in $KEYFILE is listed, not revoked, and may read every collection
  "$BIN/saksi" keys ls --json --data-dir "$DATA" | "$BIN/python" -c '
import json, sys
key_id = open(sys.argv[1]).read().split("_")[1]
sys.exit(0 if any(k["id"] == key_id and not k["revoked"] and k["collections"] == ["*"]
                  for k in json.load(sys.stdin)) else 1)' "$KEYFILE"
}
if [ ! -s "$KEYFILE" ] || ! still_active; then
  (umask 077; "$BIN/saksi" keys create --role reader --collection '*' --name "make demo" --data-dir "$DATA" > "$KEYFILE")
fi
KEY=$(cat "$KEYFILE")
echo "starting: saksi serve --data-dir $DATA --port $PORT   (log: $DATA/serve.log)"
"$BIN/saksi" serve --data-dir "$DATA" --port "$PORT" > "$DATA/serve.log" 2>&1 &
server=$!
trap 'kill -TERM $server 2>/dev/null; wait $server 2>/dev/null || true' EXIT
for _ in $(seq 1 120); do
  if curl -sf -H "Authorization: Bearer $KEY" "$URL/readyz" > /dev/null; then break; fi
  if ! kill -0 $server 2>/dev/null; then cat "$DATA/serve.log"; exit 1; fi
  sleep 1
done
curl -sf -H "Authorization: Bearer $KEY" "$URL/readyz" > /dev/null || { echo "not ready after 120 s; see $DATA/serve.log"; exit 1; }

ask() {
  echo
  echo "=== $1 ==="
  echo "\$ curl -s -X POST $URL/v1/answer -H \"Authorization: Bearer \$KEY\" -H 'Content-Type: application/json' -d '{\"question\": \"$2\"}'"
  curl -s -X POST "$URL/v1/answer" -H "Authorization: Bearer $KEY" -H 'Content-Type: application/json' \
       -d "{\"question\": \"$2\"}" | "$BIN/python" scripts/show_answer.py
}
ask "1. Indonesian question" "Berapa tarif pajak penghasilan atas persewaan tanah dan bangunan?"
ask "2. English question over the Indonesian text" "What is the penalty for filing the SPT Masa late?"
ask "3. A question the corpus cannot answer (refusal)" "Berapa tarif bea masuk untuk impor mobil listrik?"
echo
echo "The full JSON: drop the '| show_answer.py'. API description: $URL/docs while it runs."
echo "The demo's key (a reader of every collection) is in $KEYFILE: KEY=\$(cat $KEYFILE)."
if [ "${DEMO_KEEP_SERVING:-1}" = "0" ]; then exit 0; fi
echo
echo "=== The reviewer's page ==="
echo "Open $URL/ in a browser and sign in with the demo's key, or open this link, which signs in"
echo "(the key is in the part after '#', which the browser does not send to any server):"
echo
echo "    $URL/ui/signin#key=$KEY"
echo
if [ "$REGS" != "none" ] && [ -d "$REGS" ]; then
  echo "Two collections: 'default' (the sample corpus) and 'regulations' (the real PMK and regional regulations)."
fi
echo "The server keeps running for the page; Ctrl-C stops it (DEMO_KEEP_SERVING=0 make demo stops after the questions)."
wait $server
