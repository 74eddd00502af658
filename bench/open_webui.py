"""saksi in Open WebUI, in a real browser (issue 29): Open WebUI itself, with saksi added as an OpenAI-compatible
connection, driven in Debian's chromium with Playwright. A question asked in its chat shows the answer with numbered
sources whose text is the exact quote; a refusal reads as a refusal. Screenshots go to docs/img/.

Heavy (Open WebUI is ~530 packages in a virtualenv of its own, and a minute to start), so a bench, not a test:

    .venv/bin/python bench/open_webui.py [--venv .venv-openwebui] [--out bench/results/open_webui.json]

The first run creates `--venv` and installs `open-webui==0.12.4` into it from the package registry. Open WebUI runs
offline (OFFLINE_MODE, HF_HUB_OFFLINE; it logs a failed load of its own embedding model and carries on: saksi does
the retrieval), without sign-in (WEBUI_AUTH=false), its Ollama connection off, and one OpenAI connection: a real
`saksi serve` over the sample corpus (tests/browser's `ServedSite`) with a reader key. Exit 1 when a check fails.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

VERSION = "0.12.4"
IMG = ROOT / "docs" / "img"


def ensure_venv(venv: Path) -> Path:
    exe = venv / "bin" / "open-webui"
    if not exe.exists():
        print(f"installing open-webui=={VERSION} into {venv} (once; several minutes)", flush=True)
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        subprocess.run([str(venv / "bin" / "pip"), "install", "--quiet", f"open-webui=={VERSION}"], check=True)
    return exe


def wait_for(url: str, limit_s: float) -> float:
    started = time.monotonic()
    while time.monotonic() - started < limit_s:
        try:
            urllib.request.urlopen(url, timeout=3)
            return time.monotonic() - started
        except OSError:
            time.sleep(2)
    raise RuntimeError(f"{url} did not answer within {limit_s:g} s")


def expected(site, question: str) -> dict:
    """What saksi answers, through its own chat endpoint (the reference the browser must show)."""
    req = urllib.request.Request(site.url + "/v1/chat/completions", method="POST",
                                 data=json.dumps({"model": "saksi", "messages": [{"role": "user", "content": question}]}
                                                 ).encode(),
                                 headers={"Authorization": f"Bearer {site.reader}", "Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=300) as r:
        return json.loads(r.read())


def ask(page, question: str, done_text: str) -> None:
    page.goto(page.url.split("/c/")[0] if "/c/" in page.url else page.url, wait_until="load")
    page.locator("#chat-input").wait_for(timeout=120_000)
    page.wait_for_timeout(2000)
    if page.get_by_text("Okay, Let's Go!").count():  # the release notes Open WebUI shows once
        page.get_by_text("Okay, Let's Go!").click()
    page.locator("#chat-input").click()
    page.keyboard.type(question)
    page.keyboard.press("Enter")
    page.get_by_text(done_text).last.wait_for(timeout=300_000)  # saksi's last status: the answer is complete
    page.wait_for_timeout(1500)
    page.get_by_text(question).last.evaluate("e => e.scrollIntoView({block: 'start'})")  # the answer from its top
    page.wait_for_timeout(500)


def norm(text: str) -> str:
    return " ".join(text.split())


def run(page, site, owui: str, checks: dict) -> None:
    from tests.browser import ANSWERED, REFUSED

    want = expected(site, ANSWERED)
    answer = want["saksi"]["answer"]
    quotes = list(dict.fromkeys(x["quote"] for c in answer["claims"] if c["status"] == "supported"
                                for x in c["citations"]))
    page.goto(owui + "/", wait_until="load")
    ask(page, ANSWERED, "Selesai:")
    body = page.locator("body").inner_text()
    m = re.search(r"(\d+) Sources", body)
    checks["sources_shown"] = int(m[1]) if m else 0
    checks["sources_expected"] = len(quotes)
    checks["every_claim_in_the_text"] = all(norm(c["text"]) in norm(body) for c in answer["claims"]
                                            if c["status"] == "supported")
    page.screenshot(path=str(IMG / "open-webui-answer.png"))
    first = answer["claims"][0]["citations"][0]
    chip = page.locator(f'button[aria-label="View source: {first["path"]}"]').first
    chip.click()
    dialog = page.locator("[role=dialog]").last
    dialog.wait_for(timeout=30_000)
    shown = norm(dialog.inner_text())
    checks["source_shows_the_exact_quote"] = norm(first["quote"]) in shown
    checks["source_links_to_the_evidence"] = "/ui/documents/default/" in shown
    page.screenshot(path=str(IMG / "open-webui-source.png"))
    page.keyboard.press("Escape")
    page.goto(owui + "/", wait_until="load")
    ask(page, REFUSED, "Ditolak:")
    body = page.locator("body").inner_text()
    checks["refusal_reads_as_a_refusal"] = "Tidak ada jawaban yang dapat dikutip." in body
    checks["refusal_names_the_nearest_records"] = "Catatan terdekat" in body
    checks["refusal_has_no_sources"] = not re.search(r"\d+ Sources?", body.split(REFUSED)[-1])
    page.screenshot(path=str(IMG / "open-webui-refusal.png"))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--venv", type=Path, default=ROOT / ".venv-openwebui")
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--out", type=Path, default=ROOT / "bench" / "results" / "open_webui.json")
    args = ap.parse_args()

    from playwright.sync_api import sync_playwright

    from served_process import free_port, stop_server
    from tests.browser import ServedSite, launch_chromium

    exe = ensure_venv(args.venv)
    IMG.mkdir(parents=True, exist_ok=True)
    site = ServedSite().start()
    work = Path(tempfile.mkdtemp(prefix="saksi-openwebui-"))
    port = args.port or free_port()
    env = {**os.environ, "DATA_DIR": str(work / "data"), "OFFLINE_MODE": "true", "HF_HUB_OFFLINE": "1",
           "WEBUI_AUTH": "false", "ENABLE_OLLAMA_API": "false", "OPENAI_API_BASE_URL": site.url + "/v1",
           "OPENAI_API_KEY": site.reader, "PORT": str(port)}
    (work / "data").mkdir()
    log = open(work / "open-webui.log", "wb")
    proc = subprocess.Popen([str(exe), "serve", "--port", str(port)], env=env, stdout=log, stderr=subprocess.STDOUT,
                            start_new_session=True)
    checks: dict = {}
    try:
        owui = f"http://127.0.0.1:{port}"
        checks["open_webui_ready_s"] = round(wait_for(owui + "/health", 600), 1)
        with sync_playwright() as p:
            browser = launch_chromium(p)
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            page.set_default_timeout(60_000)
            run(page, site, owui, checks)
            browser.close()
    finally:
        stop_server(proc, grace_s=20)
        site.stop()
    passed = all(v for k, v in checks.items() if isinstance(v, bool)) and \
        checks.get("sources_shown") == checks.get("sources_expected")
    out = {"bench": "open_webui", "open_webui": VERSION, "checks": checks, "passed": passed,
           "screenshots": [f"docs/img/open-webui-{n}.png" for n in ("answer", "source", "refusal")]}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(out, indent=1) + "\n", encoding="utf-8")
    print(json.dumps(out, indent=1))
    return 0 if passed else 1


if __name__ == "__main__":
    sys.exit(main())
