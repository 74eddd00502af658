"""The web page in a real browser: Playwright driving Debian's `chromium` against a real
`saksi serve` (tests/browser/test_journeys.py; scripts/screenshots.py uses the same machinery).

`ServedSite` builds a data directory (the sample corpus plus a small two-page PDF regulation),
makes a reader and a curator key with `saksi keys create`, starts `saksi serve` on a free
loopback port in a session of its own, waits for `/readyz`, and stops it and every process of
its Ray session at the end (bench/served_process.py does the port, the wait and the stop).

Playwright's own browser download cannot work here (no CDN); `make test` installs Debian's
`chromium` with apt when it is missing. Without it the browser tests fail, saying so, unless
SAKSI_SKIP_BROWSER=1 asks to skip them.
"""
from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from ..pdfs import pdf_bytes

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "corpus" / "sample"
_BESIDE = Path(sys.executable).parent / "saksi"  # the virtualenv's command, else the one on PATH
SAKSI = str(_BESIDE) if _BESIDE.exists() else shutil.which("saksi") or "saksi"
SKIP_ENV = "SAKSI_SKIP_BROWSER"

ANSWERED = "Berapa tarif pajak penghasilan atas persewaan tanah dan bangunan?"
REFUSED = "Berapa tarif bea masuk untuk impor mobil listrik?"
# the PDF's second page holds this provision, and only there
PDF_QUESTION = "Berapa bea meterai atas risalah lelang kapal nelayan?"
PDF_DOC = "pmk-88-2024"
PDF_PAGES = [
    ["PERATURAN MENTERI KEUANGAN REPUBLIK INDONESIA", "NOMOR 88 TAHUN 2024", "TENTANG",
     "BEA METERAI DOKUMEN LELANG", "", "Pasal 1",
     "Dalam Peraturan Menteri ini yang dimaksud dengan risalah lelang adalah berita acara pelaksanaan lelang."],
    ["Pasal 2",
     "(1) Bea meterai atas risalah lelang kapal nelayan ditetapkan sebesar Rp15.000 per dokumen.",
     "(2) Bea meterai sebagaimana dimaksud pada ayat (1) dilunasi sebelum risalah lelang ditandatangani."],
]


def _served_process():
    """bench/served_process.py (free_port, wait_ready, stop_server), loaded from its file: bench/
    is a folder of scripts, not a package."""
    spec = importlib.util.spec_from_file_location("saksi_bench_served_process", ROOT / "bench" / "served_process.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


served_process = _served_process()


def chromium_path() -> str | None:
    """Debian's chromium (the only browser these tests use), or None."""
    return shutil.which("chromium")


def missing_chromium_message() -> str:
    return ("Debian's `chromium` is not on PATH: the browser tests (tests/browser/) drive it through Playwright "
            "(Playwright's own browser download cannot work here). `make test` installs it with "
            "`apt-get install -y chromium`; or run `sudo apt-get install -y chromium`; or set "
            f"{SKIP_ENV}=1 to skip the browser tests knowingly.")


def launch_chromium(playwright):
    """Headless Debian chromium; `--no-sandbox` because CI and containers run as root."""
    exe = chromium_path()
    if exe is None:
        raise RuntimeError(missing_chromium_message())
    return playwright.chromium.launch(executable_path=exe, headless=True,
                                      args=["--no-sandbox", "--disable-dev-shm-usage"])


def saksi(*args: str, check: bool = True, timeout: float = 600) -> subprocess.CompletedProcess:
    """`saksi ARGS`, its output captured (an error with that output when `check` and it fails)."""
    done = subprocess.run([SAKSI, *args], capture_output=True, text=True, timeout=timeout, cwd=ROOT)
    if check and done.returncode != 0:
        raise RuntimeError(f"`saksi {' '.join(args)}` exited {done.returncode}:\n{done.stdout}\n{done.stderr}")
    return done


@dataclass
class ServedSite:
    """A real `saksi serve` over a data directory of its own; `start()`, then `stop()` (or `with`)."""

    root: Path = field(default_factory=lambda: Path(tempfile.mkdtemp(prefix="saksi-browser-")))
    url: str = ""
    reader: str = ""
    curator: str = ""
    proc: subprocess.Popen | None = None
    ready_s: float = 0.0
    own_root: bool = True
    grace_s: float = 45  # how long `stop` lets the server shut down on SIGTERM before killing its session

    @property
    def data_dir(self) -> Path:
        return self.root / "data"

    @property
    def log(self) -> Path:
        return self.root / "serve.log"

    def prepare(self) -> None:
        """The sample corpus and the two-page PDF, ingested; a reader key and a curator key."""
        pdfs = self.root / "pdf"
        pdfs.mkdir(parents=True, exist_ok=True)
        (pdfs / f"{PDF_DOC}.pdf").write_bytes(pdf_bytes(PDF_PAGES))
        saksi("ingest", str(SAMPLE), str(pdfs), "--data-dir", str(self.data_dir))
        self.reader = saksi("keys", "create", "--role", "reader", "--name", "browser reader",
                            "--data-dir", str(self.data_dir)).stdout.strip()
        self.curator = saksi("keys", "create", "--role", "curator", "--name", "browser curator",
                             "--data-dir", str(self.data_dir)).stdout.strip()

    def start(self, limit_s: float = 300) -> "ServedSite":
        self.prepare()
        port = served_process.free_port()
        self.url = f"http://127.0.0.1:{port}"
        # its own Ray node, even when this process already joined one (tests/serve/ starts Ray in-process)
        env = {k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"}
        with open(self.log, "wb") as log:
            # a session of its own: stop() ends the server and every process of its Ray session
            self.proc = subprocess.Popen([SAKSI, "serve", "--data-dir", str(self.data_dir), "--port", str(port)],
                                         stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                         cwd=ROOT, env=env, start_new_session=True)
        try:
            self.ready_s = served_process.wait_ready(self.proc, self.url, self.reader, limit_s)
        except Exception as e:
            self.stop()
            raise RuntimeError(f"saksi serve did not become ready: {e}\n--- {self.log} (end):\n{self.log_tail()}") \
                from None
        return self

    def log_tail(self, chars: int = 4000) -> str:
        try:
            return self.log.read_text(errors="replace")[-chars:]
        except OSError:
            return "(no log)"

    def stop(self) -> str:
        how = "not started"
        if self.proc is not None:
            how = served_process.stop_server(self.proc, grace_s=self.grace_s)
            self.proc = None
        if self.own_root:
            shutil.rmtree(self.root, ignore_errors=True)
        return how

    def __enter__(self) -> "ServedSite":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


# --- what a person does on the page (Playwright's sync API) -------------------------------------


def sign_in(page, site: ServedSite, key: str | None = None) -> None:
    """Sign in through the form, as a person pastes a key."""
    shown = page.goto(f"{site.url}/ui/signin")
    assert shown is not None and shown.ok, f"GET /ui/signin answered {shown and shown.status}"
    page.fill("#key", key or site.reader)
    page.click("#signin-submit")
    page.wait_for_url(f"{site.url}/")


def ask(page, site: ServedSite, question: str) -> str:
    """Ask on the ask page; the answer page's trace id."""
    shown = page.goto(f"{site.url}/")
    assert shown is not None and shown.ok, f"GET / answered {shown and shown.status}"
    page.fill("#question", question)
    page.click("#ask-submit")
    page.wait_for_url("**/ui/answers/**", timeout=120_000)
    return page.locator("article[data-testid=answer]").get_attribute("data-trace-id")


__all__ = ["ANSWERED", "PDF_DOC", "PDF_QUESTION", "REFUSED", "ROOT", "SAKSI", "SKIP_ENV", "ServedSite", "ask",
           "chromium_path", "launch_chromium", "missing_chromium_message", "pdf_bytes", "saksi", "sign_in"]
