"""In a real browser: the funnel explorer in JupyterLab, and the HTML evaluation report.

Starts JupyterLab on 127.0.0.1 (a random free port, a random token, no browser of its own, no
update or news checks), writes a small notebook that builds an index of the fixture corpus and
shows :class:`ragkit.course.widgets.FunnelExplorer`, opens it in Debian's ``chromium`` through
Playwright's Python API (``executable_path``; Playwright never downloads a browser here), runs
all cells, moves the ``deliver`` slider and checks that the summary, the table and the plot
update. A screenshot is saved under ``.ragkit-cache/browser/``.

The HTML evaluation report (``ragkit eval --html``) gets the same treatment: served over
loopback HTTP, opened in the same Chromium, every figure must render and the console must stay
free of errors.

Skips, saying why, when ``/usr/bin/chromium`` or the ``playwright`` package is missing
(``apt-get install chromium``; ``pip install playwright``, no ``playwright install`` needed).
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

CHROMIUM = Path(os.environ.get("RAGKIT_CHROMIUM", "/usr/bin/chromium"))
ROOT = Path(__file__).resolve().parent.parent
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]

NOTEBOOK_CELLS = [
    "from ragkit.search.funnel import Funnel\n"
    "from ragkit.index.index import Index\n"
    "from ragkit.documents.loaders import load_corpus\n"
    "from ragkit.core.scope import Scope\n"
    "from ragkit.course.widgets import FunnelExplorer\n"
    f"docs, _ = load_corpus({str(ROOT / 'tests' / 'fixtures' / 'corpus')!r})\n"
    "index = Index.build(docs)",
    "explorer = FunnelExplorer(Funnel(index), 'E-4471 bank file rejected', scope=Scope('acme', ['ops']),\n"
    "                          candidates=10, deliver=2, rerank_mode='none', top=8)\n"
    "explorer",
]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _notebook(path: Path) -> None:
    cells = [{"cell_type": "code", "execution_count": None, "id": f"c{i}", "metadata": {}, "outputs": [],
              "source": src} for i, src in enumerate(NOTEBOOK_CELLS)]
    nb = {"cells": cells, "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3",
                                                      "language": "python"}},
          "nbformat": 4, "nbformat_minor": 5}
    path.write_text(json.dumps(nb))


def _playwright_or_skip():
    """Playwright's sync API, or a skip that says what is missing (Debian's chromium, playwright)."""
    if not CHROMIUM.exists():
        pytest.skip(f"{CHROMIUM} not found: install Debian's chromium (apt-get install -y chromium) "
                    "or set RAGKIT_CHROMIUM to a Chromium binary")
    return pytest.importorskip("playwright.sync_api",
                               reason="the playwright package is missing (pip install playwright)")


@contextlib.contextmanager
def _page(sync_api, tmp_path, errors):
    """A page of Debian's chromium (fresh profile, this machine's flags) that logs console errors."""
    with sync_api.sync_playwright() as p:
        context = p.chromium.launch_persistent_context(
            str(tmp_path / "profile"), executable_path=str(CHROMIUM), headless=True, args=FLAGS,
            viewport={"width": 1400, "height": 1000})
        try:
            page = context.new_page()
            page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
            page.on("pageerror", lambda e: errors.append(str(e)))
            yield page
        finally:
            context.close()


@pytest.fixture
def lab(tmp_path):
    """A JupyterLab server on loopback serving ``tmp_path``; yields ``(url, token, root)``."""
    port, token = _free_port(), secrets.token_hex(16)
    env = {**os.environ, "JUPYTER_RUNTIME_DIR": str(tmp_path / "runtime"),
           "JUPYTER_CONFIG_DIR": str(tmp_path / "config"), "JUPYTERLAB_WORKSPACES_DIR": str(tmp_path / "ws"),
           "OMP_NUM_THREADS": "1", "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    root = tmp_path / "nb"
    root.mkdir()
    cmd = [sys.executable, "-m", "jupyterlab", "--no-browser", "--ServerApp.open_browser=False",
           "--ServerApp.ip=127.0.0.1", f"--ServerApp.port={port}", "--ServerApp.port_retries=0",
           f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={root}",
           "--LabApp.news_url=", "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
           "--LabApp.extension_manager=readonly", "--ServerApp.allow_remote_access=False"]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        cmd.append("--allow-root")  # CI containers run as root
    log = open(tmp_path / "lab.log", "w")
    proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=env, cwd=root)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 90
        while True:
            try:
                with urllib.request.urlopen(f"{url}/api/status?token={token}", timeout=2) as r:
                    if r.status == 200:
                        break
            except OSError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"JupyterLab did not start: {(tmp_path / 'lab.log').read_text()[-2000:]}")
            time.sleep(0.5)
        yield url, token, root
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_explorer_slider_updates_table_and_plot_in_chromium(lab, tmp_path):
    sync_api = _playwright_or_skip()
    url, token, root = lab
    _notebook(root / "explorer.ipynb")
    errors: list[str] = []
    with _page(sync_api, tmp_path, errors) as page:
        page.goto(f"{url}/lab/tree/explorer.ipynb?token={token}")
        page.wait_for_selector(".jp-NotebookPanel .jp-Cell", timeout=90_000)
        choose = page.locator(".jp-Dialog button:has-text('Select')")
        try:  # JupyterLab asks which kernel to start for a notebook it has not run before
            choose.wait_for(timeout=30_000)
            choose.click()
        except sync_api.TimeoutError:
            pass
        page.wait_for_selector(".jp-Notebook-ExecutionIndicator[data-status='idle']", timeout=120_000,
                               state="attached")
        page.click(".lm-MenuBar-itemLabel:text-is('Run')")
        page.click(".lm-Menu-itemLabel:text-is('Run All Cells')")
        if choose.count():
            choose.click()
        try:
            table = page.wait_for_selector("table.ragkit-funnel", timeout=420_000)
        except sync_api.TimeoutError:
            failed = ROOT / ".ragkit-cache" / "browser" / "failure.png"
            failed.parent.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(failed), full_page=True)
            raise AssertionError(f"the explorer's table never appeared (screenshot {failed}); "
                                 f"console errors: {errors[:5]}") from None
        summary = page.locator(".widget-html-content:has-text('delivered:')").first
        assert "deliver=2" in summary.inner_text()
        first_table = table.inner_text()
        first_src = page.locator(".widget-image").first.get_attribute("src")
        delivered_before = first_table.count("True")

        slider = page.locator(".widget-slider:has(.widget-label:text-is('deliver'))")
        readout = slider.locator(".widget-readout")
        readout.click()
        page.keyboard.press("Control+A")
        page.keyboard.type("5")
        page.keyboard.press("Enter")
        page.wait_for_function(
            "() => [...document.querySelectorAll('.widget-html-content')]"
            ".some(e => e.innerText.includes('deliver=5'))", timeout=120_000)
        page.wait_for_timeout(500)
        second_table = page.locator("table.ragkit-funnel").first.inner_text()
        second_src = page.locator(".widget-image").first.get_attribute("src")
        shot = ROOT / ".ragkit-cache" / "browser" / "explorer.png"
        shot.parent.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(shot), full_page=True)
        shutil.copy(shot, tmp_path / "explorer.png")
    assert second_table != first_table, "moving the slider did not change the table"
    assert second_table.count("True") > delivered_before, "more hits should be marked delivered"
    assert second_src != first_src, "moving the slider did not redraw the plot"
    widget_errors = [e for e in errors if "widget" in e.lower() or "ragkit" in e.lower()]
    assert not widget_errors, f"console errors from the widgets: {widget_errors[:5]}"


@pytest.fixture
def report_page(tmp_path):
    """The HTML evaluation report of a small hand-built evaluation, served over loopback HTTP."""
    import functools
    import http.server
    import threading

    from test_evaluation import CASES, RESULTS

    from ragkit import evaluate
    from ragkit.evaluation import html_report

    pytest.importorskip("seaborn", reason="the HTML report needs seaborn (pip install 'ragkit[course]')")
    report = evaluate(CASES, lambda c: RESULTS[c.id], progress=False, placement="test")
    (tmp_path / "report.html").write_text(html_report(report), encoding="utf-8")
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(tmp_path))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/report.html"
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_html_evaluation_report_renders_in_chromium(report_page, tmp_path):
    sync_api = _playwright_or_skip()
    errors: list[str] = []
    with _page(sync_api, tmp_path, errors) as page:
        page.goto(report_page, wait_until="load")
        figures = page.eval_on_selector_all(
            "img", "els => els.map(e => [e.complete, e.naturalWidth, e.naturalHeight])")
        tables = page.locator("table").count()
        text = page.inner_text("body")
        shot = ROOT / ".ragkit-cache" / "browser" / "report.png"
        shot.parent.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(shot), full_page=True)
    assert len(figures) == 4, f"expected the survival, cost, calls and honesty figures, got {len(figures)}"
    assert all(done and w > 100 and h > 100 for done, w, h in figures), f"a figure did not render: {figures}"
    assert tables >= 2 and "end to end" in text and "Diagnosis" in text
    assert not errors, f"console errors while rendering the report: {errors[:5]}"
