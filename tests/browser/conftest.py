"""Fixtures of the browser tests: one real `saksi serve` for the module, one headless Debian
chromium, and a fresh browser context (no cookies) per test."""
from __future__ import annotations

import pytest

from . import ServedSite, chromium_path, launch_chromium, missing_chromium_message


@pytest.fixture(scope="session")
def chromium() -> str:
    """The browser's path. A missing browser fails the tests (CI installs it; a skipped browser
    suite would hide a broken install). SAKSI_SKIP_BROWSER=1, the one way to skip them, is read
    where the test module is imported (test_journeys.py), before Playwright is."""
    path = chromium_path()
    if path is None:
        pytest.fail(missing_chromium_message(), pytrace=False)
    return path


@pytest.fixture(scope="module")
def site(chromium):
    """A real `saksi serve` on a free 127.0.0.1 port over a data directory of its own (the sample
    corpus and a two-page PDF), with a reader and a curator key; stopped with its Ray session."""
    served = ServedSite()
    try:
        served.start()
    except Exception:
        served.stop()
        raise
    yield served
    how = served.stop()
    assert how.startswith("SIGTERM"), f"saksi serve did not stop on SIGTERM within {served.grace_s} s: {how}"


@pytest.fixture(scope="module")
def browser(chromium):
    """Module-scoped on purpose: while Playwright's sync API is open, its event loop runs in this
    thread, and every later test that calls asyncio.run() would fail."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = launch_chromium(p)
        yield b
        b.close()


@pytest.fixture
def context(browser):
    """A fresh context: no cookies, Indonesian first (the page's default), a laptop's width."""
    ctx = browser.new_context(viewport={"width": 1280, "height": 800}, locale="id-ID")
    ctx.set_default_timeout(30_000)
    yield ctx
    ctx.close()


@pytest.fixture
def page(context):
    return context.new_page()
