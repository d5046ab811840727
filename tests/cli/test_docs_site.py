"""The documentation site builds with ``mkdocs build --strict`` and renders in headless Chromium.

Every page of the built site is loaded over HTTP in Chromium (Debian's ``chromium``,
driven by Playwright): the page answers 200, every image has loaded (a positive natural
width), and the browser logged no console error, page error or failed request. Skipped,
with the reason, only when the docs extra (``pip install -e ".[docs]"``) or Chromium is not
installed.
"""

from __future__ import annotations

import functools
import http.server
import importlib.util
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest

pytestmark = pytest.mark.docs

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def _chromium() -> str | None:
    for name in ("chromium", "chromium-browser"):
        found = shutil.which(name)
        if found:
            return found
    return "/usr/bin/chromium" if Path("/usr/bin/chromium").exists() else None


@pytest.fixture(scope="module")
def site(tmp_path_factory):  # type: ignore[no-untyped-def]
    missing = [m for m in ("mkdocs", "material", "mkdocstrings") if not importlib.util.find_spec(m)]
    if missing:
        pytest.skip(f"mkdocs is not installed ({', '.join(missing)}): pip install -e '.[docs]'")
    out = tmp_path_factory.mktemp("site")
    proc = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-q", "-d", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        env={**__import__("os").environ, "NO_MKDOCS_2_WARNING": "1"},
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return out


def test_the_site_has_every_page_of_the_nav(site):
    for page in (
        "index.html", "getting-started/index.html", "cli/index.html", "privacy-truth/index.html",
        "ledger/index.html", "multi-host/index.html", "benchmarks/index.html", "seed000_id3/index.html",
        "api/ledger/index.html", "api/mechanisms/index.html", "api/learners/index.html",
        "api/audits/index.html", "api/testing/index.html", "api/data/index.html",
        "schema/index.html", "benchmarks/results/audit_learners/index.html",
    ):  # fmt: skip
        assert (site / page).is_file(), page
    data = (site / "api" / "data" / "index.html").read_text(encoding="utf-8")
    for name in ("Schema", "read_csv", "schema_file_problems", "load_dataset"):
        assert f'id="privet.data.{name}"' in data, name  # privet.data is in the reference
    api = (site / "api" / "ledger" / "index.html").read_text(encoding="utf-8")
    assert "Ledger" in api and "reserve" in api  # mkdocstrings rendered the docstrings
    import privet.learners

    learners = (site / "api" / "learners" / "index.html").read_text(encoding="utf-8")
    for name in privet.learners.__all__:  # every learner is in the API reference
        assert f'id="privet.learners.{name}"' in learners, name
    cli = (site / "cli" / "index.html").read_text(encoding="utf-8")
    for command in ("privet train", "privet schema check", "privet ledger history"):
        assert f"{command}</code>" in cli, command  # the help, generated from the parser


def test_every_page_loads_every_image_shows_and_nothing_errs_in_chromium(site, tmp_path):
    chromium = _chromium()
    if chromium is None:
        pytest.skip("Chromium is not installed (Debian: apt-get install -y chromium)")
    if importlib.util.find_spec("playwright") is None:
        pytest.skip("playwright is not installed: pip install -e '.[docs]'")
    from playwright.sync_api import sync_playwright

    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(site))
    handler.log_message = lambda *a, **k: None  # type: ignore[attr-defined]
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}/"
    pages = sorted(
        p.relative_to(site).as_posix() for p in site.rglob("*.html") if p.name != "404.html"
    )
    problems: list[str] = []
    images = 0
    try:
        with sync_playwright() as pw:
            context = pw.chromium.launch_persistent_context(
                str(tmp_path / "profile"),  # a fresh --user-data-dir
                executable_path=chromium,
                headless=True,
                args=CHROMIUM_ARGS,
            )
            page = context.new_page()
            current = {"url": ""}
            page.on(
                "console",
                lambda m: (
                    problems.append(f"{current['url']}: console {m.type}: {m.text}")
                    if m.type == "error"
                    else None
                ),
            )
            page.on("pageerror", lambda e: problems.append(f"{current['url']}: page error {e}"))
            page.on(
                "requestfailed",  # ERR_ABORTED: cancelled by the next navigation, not a failure
                lambda r: (
                    problems.append(f"{current['url']}: failed request {r.url}: {r.failure}")
                    if "ERR_ABORTED" not in (r.failure or "")
                    else None
                ),
            )
            for rel in pages:
                current["url"] = rel
                response = page.goto(base + rel, wait_until="load")
                if response is None or response.status != 200:
                    problems.append(
                        f"{rel}: status {None if response is None else response.status}"
                    )
                    continue
                broken = page.eval_on_selector_all(
                    "img",
                    "imgs => imgs.filter(i => !i.complete || i.naturalWidth === 0)"
                    ".map(i => i.getAttribute('src'))",
                )
                images += page.eval_on_selector_all("img", "imgs => imgs.length")
                problems += [f"{rel}: image not shown: {src}" for src in broken]
            context.close()
    finally:
        server.shutdown()
        server.server_close()
    assert not problems, "\n".join(problems[:30])
    assert len(pages) >= 15 and images >= 1  # the benchmark figures are there
