"""Screenshots of the reviewer's page for docs/ui.md (PNG files in docs/ui/).

    .venv/bin/python scripts/screenshots.py [--out docs/ui]

Starts a real `saksi serve` over a data directory of its own, exactly as the browser tests do
(tests/browser/: the sample corpus plus a two-page PDF, a reader key), drives the journeys in
headless Debian `chromium` (install it with `apt-get install chromium`), saves each page, and
stops the server and its Ray session. Every picture is the viewport only (1280 × 800, or
390 × 844 for the phone), and is reduced to a 256-colour palette when that keeps it readable and
makes it smaller, so each stays well under 200 KB.
"""
from __future__ import annotations

import argparse
import io
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.browser import (ANSWERED, PDF_QUESTION, REFUSED, ServedSite, ask,  # noqa: E402
                           launch_chromium, sign_in)

DESKTOP = {"width": 1280, "height": 800}
PHONE = {"width": 390, "height": 844}
LIMIT = 200_000


def save(page, path: Path) -> int:
    """The viewport as a PNG, palette-reduced when that is smaller; its size in bytes."""
    from PIL import Image

    raw = page.screenshot(full_page=False, animations="disabled", caret="hide")
    image = Image.open(io.BytesIO(raw)).convert("RGB")
    buf = io.BytesIO()
    image.quantize(colors=256, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE).save(
        buf, "PNG", optimize=True)
    data = buf.getvalue() if len(buf.getvalue()) < len(raw) else raw
    path.write_bytes(data)
    return len(data)


def scroll_to(page, selector: str, block: str = "start") -> None:
    page.locator(selector).first.evaluate(f"e => e.scrollIntoView({{block: '{block}'}})")


def shoot(site: ServedSite, out: Path) -> dict[str, int]:
    from playwright.sync_api import sync_playwright

    out.mkdir(parents=True, exist_ok=True)
    sizes: dict[str, int] = {}

    def take(page, name: str) -> None:
        page.wait_for_load_state("load")
        sizes[name] = save(page, out / name)

    with sync_playwright() as p:
        browser = launch_chromium(p)
        try:
            ctx = browser.new_context(viewport=DESKTOP, device_scale_factor=1, locale="id-ID")
            page = ctx.new_page()
            page.goto(f"{site.url}/ui/signin")
            take(page, "signin.png")
            sign_in(page, site)
            page.fill("#question", ANSWERED)
            take(page, "ask.png")

            trace_id = ask(page, site, ANSWERED)
            page.locator("ol#claims details.breakdown").first.evaluate("d => d.open = true")
            take(page, "answer.png")
            answer_url = page.url

            link = page.locator("ol#claims a.citation", has_text="Pasal 3 › ayat (1)").first
            link.click()
            page.wait_for_url("**/ui/documents/**/text?**")
            page.locator("mark#hl").wait_for()
            take(page, "evidence.png")

            ask(page, site, PDF_QUESTION)
            page.locator("ol#claims a.citation", has_text="Pasal 2 › ayat (1)").first.click()
            page.wait_for_url("**/ui/documents/**/text?**")
            page.locator("mark#hl").wait_for()
            page.evaluate("window.scrollTo(0, 0)")
            take(page, "evidence-pdf.png")

            ask(page, site, REFUSED)
            take(page, "refusal.png")

            page.goto(f"{site.url}/ui/traces/default/{trace_id}")
            scroll_to(page, "table.lane")
            page.evaluate("window.scrollBy(0, -120)")
            take(page, "trace.png")

            page.goto(f"{site.url}/ui/corpus")
            take(page, "corpus.png")

            page.goto(f"{site.url}/ui/documents/default/pmi-7-2025")
            scroll_to(page, "#outline")
            page.evaluate("window.scrollBy(0, -80)")
            take(page, "document.png")

            page.goto(f"{answer_url.split('?')[0]}")
            page.locator("#lang-toggle").click()
            page.wait_for_load_state("load")
            page.locator("ol#claims details.breakdown").first.evaluate("d => d.open = true")
            take(page, "answer-en.png")
            ctx.close()

            phone = browser.new_context(viewport=PHONE, device_scale_factor=1, is_mobile=True, has_touch=True,
                                        locale="id-ID")
            page = phone.new_page()
            sign_in(page, site)
            page.goto(answer_url)
            take(page, "answer-phone.png")
            phone.close()
        finally:
            browser.close()
    return sizes


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "ui", help="where the PNG files go")
    args = parser.parse_args()
    site = ServedSite()
    try:
        site.start()
        print(f"serving at {site.url} (ready in {site.ready_s:.0f} s)", file=sys.stderr)
        sizes = shoot(site, args.out)
    finally:
        print(f"server stopped ({site.stop()})", file=sys.stderr)
    for name, size in sizes.items():
        print(f"{args.out / name}: {size / 1000:.0f} KB")
    too_big = [n for n, s in sizes.items() if s > LIMIT]
    if too_big:
        print(f"over {LIMIT // 1000} KB: {', '.join(too_big)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
