"""Drive a real JupyterLab in headless Chromium (Debian's package) with the
Python playwright package: no browser download, loopback only.

Used by the browser tests and by ``python -m tests.browser.fps``.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run", "--disable-quic"]
TOKEN = "gpuviz-browser-test"


def browser_available() -> bool:
    try:
        import playwright  # noqa: F401
    except ImportError:
        return False
    return Path(CHROMIUM).exists()


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextlib.contextmanager
def jupyterlab(root: Path, *, env: dict | None = None, log: Path | None = None):
    """Serve JupyterLab on 127.0.0.1 over ``root``; yields the base URL."""
    port = _free_port()
    jupyter = Path(sys.executable).with_name("jupyter")
    command = [str(jupyter), "lab", "--no-browser", "--ip=127.0.0.1", f"--port={port}",
               f"--IdentityProvider.token={TOKEN}", f"--ServerApp.root_dir={root}", "--LabApp.news_url=None",
               "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate"]
    if os.geteuid() == 0:
        command.append("--ServerApp.allow_root=True")
    full_env = dict(os.environ, XDG_RUNTIME_DIR=os.environ.get("XDG_RUNTIME_DIR", "/tmp"), **(env or {}))
    out = open(log or os.devnull, "w")
    server = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, env=full_env)
    try:
        deadline = time.time() + 60
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), 1).close()
                break
            except OSError:
                if time.time() > deadline or server.poll() is not None:
                    raise RuntimeError(f"JupyterLab did not start (see {log})")
                time.sleep(0.3)
        yield f"http://127.0.0.1:{port}"
    finally:
        server.terminate()
        try:
            server.wait(10)
        except subprocess.TimeoutExpired:
            server.kill()
        out.close()


@contextlib.contextmanager
def notebook_page(base_url: str, notebook: str, *, viewport=(1600, 1200)):
    """Open ``notebook`` in a fresh JupyterLab workspace; yields the page."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": viewport[0], "height": viewport[1]})
            page.goto(f"{base_url}/lab/tree/{notebook}?reset&token={TOKEN}")
            page.wait_for_selector(".jp-NotebookPanel .jp-Notebook", timeout=90_000)
            page.wait_for_timeout(1500)
            select = page.locator(".jp-Dialog button:has-text('Select')")
            if select.count():  # JupyterLab may ask which kernel to start
                select.first.click()
            page.wait_for_selector(".jp-Notebook-ExecutionIndicator[data-status='idle'], "
                                   "#jp-main-statusbar :text('Idle')", timeout=90_000)
            yield page
        finally:
            browser.close()


def run_all_cells(page, timeout: float = 600) -> None:
    """Run every cell and wait until none is still queued or running."""
    page.get_by_role("menuitem", name="Run").first.click()
    page.get_by_text("Run All Cells", exact=True).click()
    page.wait_for_timeout(1000)
    page.wait_for_function(
        "() => [...document.querySelectorAll('.jp-InputPrompt')].every(p => !p.innerText.includes('*'))",
        timeout=timeout * 1000)


def run_code(page, code: str, marker: str, timeout: float = 60) -> str:
    """Append a cell with ``code`` at the end, run it and return the text of
    its output that contains ``marker`` (case-sensitive).

    Only the new cell's outputs count: an earlier cell's (a previous run's
    marker, a widget's text) would answer before this cell has run."""
    cells = page.locator(".jp-Notebook .jp-Cell")
    cells.last.click()
    page.keyboard.press("Escape")
    before = cells.count()
    page.keyboard.press("b")  # new cell below, in command mode
    page.wait_for_function("n => document.querySelectorAll('.jp-Notebook .jp-Cell').length > n", arg=before)
    cell = cells.nth(before)  # the new last cell, by index: Shift+Enter appends another below it
    page.keyboard.press("Enter")
    page.keyboard.insert_text(code)
    page.keyboard.press("Shift+Enter")
    output = cell.locator(".jp-OutputArea-output").filter(has_text=re.compile(re.escape(marker)))
    output.last.wait_for(timeout=timeout * 1000)
    return output.last.inner_text()


def drag(page, element, seconds: float, *, steps: int = 12, at=(0.5, 0.5), reach: float = 0.3) -> int:
    """Hold the left button and sweep across ``element`` for ``seconds``.

    The drag starts at ``at`` (fractions of the element's box) and sweeps
    ``reach`` of its width either side. Each playwright call emits ``steps``
    trusted pointer moves, so the event rate is not limited by the round
    trip of one call; returns the number of moves sent."""
    box = element.bounding_box()
    cx, cy = box["x"] + box["width"] * at[0], box["y"] + box["height"] * at[1]
    page.mouse.move(cx, cy)
    page.mouse.down()
    moves, sweep, started = 0, 0, time.time()
    while time.time() - started < seconds:
        sweep += 1
        direction = 1 if sweep % 2 else -1
        page.mouse.move(cx + direction * box["width"] * reach, cy + direction * box["height"] * reach / 3,
                        steps=steps)
        moves += steps
    page.mouse.up()
    return moves


def drag_in_page(page, element, seconds: float, *, interval_ms: float = 8) -> int:
    """Press the (trusted) mouse on ``element``, then dispatch pointer moves
    from inside the page every ``interval_ms`` for ``seconds`` and release.

    Trusted input from playwright waits for the renderer to acknowledge every
    step, so a busy page throttles it to a few moves per second; moves
    dispatched in the page measure frame delivery, not the input round trip.
    Returns the number of moves dispatched."""
    box = element.bounding_box()
    cx, cy = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
    page.mouse.move(cx, cy)
    page.mouse.down()
    moves = element.evaluate(
        """(el, [seconds, interval]) => new Promise(resolve => {
            const box = el.getBoundingClientRect();
            const start = performance.now();
            let count = 0;
            const timer = setInterval(() => {
                const t = (performance.now() - start) / 1000;
                if (t > seconds) { clearInterval(timer); resolve(count); return; }
                const phase = Math.sin(t * 3);
                el.dispatchEvent(new PointerEvent("pointermove", {
                    pointerId: 1, pointerType: "mouse", isPrimary: true, buttons: 1, bubbles: true,
                    clientX: box.left + box.width * (0.5 + 0.3 * phase),
                    clientY: box.top + box.height * (0.5 + 0.1 * phase)}));
                count += 1;
            }, interval);
        })""", [seconds, interval_ms])
    page.mouse.up()
    return moves


def copy_notebook(source: Path, root: Path) -> str:
    root.mkdir(parents=True, exist_ok=True)
    shutil.copy(source, root / source.name)
    return source.name


def write_notebook(root: Path, name: str, cells) -> str:
    """A notebook of the code ``cells`` (a python3 kernel) written to
    ``root / name``; returns ``name`` for :func:`notebook_page`. End with a
    small text cell when the test calls :func:`run_code`: it clicks the last
    cell, which must not be a widget's."""
    import nbformat

    book = nbformat.v4.new_notebook()
    book.cells = [nbformat.v4.new_code_cell(code) for code in cells]
    book.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    root.mkdir(parents=True, exist_ok=True)
    nbformat.write(book, root / name)
    return name


def marked_json(text: str, marker: str) -> dict:
    """The JSON a cell printed after ``marker`` (the rest of that line), from :func:`run_code`'s output."""
    return json.loads(text[text.index(marker) + len(marker):].strip().splitlines()[0])
