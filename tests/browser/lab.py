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


def budget_ms(seconds: float) -> float:
    """A wait's budget in milliseconds: ``seconds`` on an idle machine, scaled
    by the load per core when the machine is busier than that (at most 8x).

    Every wait here is on a condition; the budget only bounds how long a
    condition may take before the test fails, and a loaded machine (several
    JupyterLabs and kernels on two cores) takes several times longer."""
    try:
        load = os.getloadavg()[0] / (os.cpu_count() or 1)
    except OSError:  # no load average on this platform
        load = 1.0
    return seconds * 1000 * min(max(load, 1.0), 8.0)


# Installs a frame counter on a canvas <img> (jupyter_rfb replaces its source
# once per frame, so each frame is one 'load' event) and returns the count.
_FRAME_COUNTER = """img => {
    if (img.__gvFrames === undefined) {
        img.__gvFrames = 0;
        img.__gvLast = performance.now();
        img.addEventListener('load', () => { img.__gvFrames += 1; img.__gvLast = performance.now(); });
    }
    return img.__gvFrames;
}"""


def frame_count(image) -> int:
    """Frames ``image`` (a canvas view's ``<img>`` locator) has loaded since its
    counter was installed (by the first call); pass the value to :func:`wait_frames`."""
    return image.evaluate(_FRAME_COUNTER)


def wait_frames(page, image, since: int, *, count: int = 1, quiet_ms: float = 500, timeout: float = 60,
                required: bool = True) -> bool:
    """Wait until ``image`` has loaded ``count`` frames more than ``since``
    (a :func:`frame_count`) and then none for ``quiet_ms``: the frames an
    action caused have arrived. With ``required=False`` returns False instead
    of raising when none came within the budget (an action that may not redraw)."""
    frame_count(image)
    try:
        page.wait_for_function(
            "([img, n, quiet]) => img.__gvFrames >= n && performance.now() - img.__gvLast >= quiet",
            arg=[image.element_handle(), since + count, quiet_ms], timeout=budget_ms(timeout))
    except Exception:
        if required:
            raise
        return False
    return True


def wait_settled(page, image, *, quiet_ms: float = 500, timeout: float = 60) -> None:
    """Wait until ``image`` shows a real frame (wider than jupyter_rfb's 1 px
    start) and has loaded none for ``quiet_ms``: whatever frames were on their
    way (the first frames, a lossless redraw after interaction) have landed."""
    frame_count(image)
    page.wait_for_function(
        "([img, quiet]) => img.complete && img.naturalWidth > 1 && performance.now() - img.__gvLast >= quiet",
        arg=[image.element_handle(), quiet_ms], timeout=budget_ms(timeout))


def wait_painted(page, element, *, timeout: float = 30) -> None:
    """Scroll ``element`` into view and wait until it lies inside the viewport
    and the browser has painted twice since (two animation frames): what a
    screenshot of it takes is on screen."""
    element.scroll_into_view_if_needed()
    page.wait_for_function(
        """el => new Promise(resolve => {
            const r = el.getBoundingClientRect();
            if (r.bottom <= 0 || r.top >= innerHeight || (el.complete === false)) { resolve(false); return; }
            requestAnimationFrame(() => requestAnimationFrame(() => resolve(true)));
        })""", arg=element.element_handle(), timeout=budget_ms(timeout))


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
            page.wait_for_selector(".jp-NotebookPanel .jp-Notebook", timeout=budget_ms(90))
            pick_kernel_or_wait_idle(page)
            yield page
        finally:
            browser.close()


IDLE = ".jp-Notebook-ExecutionIndicator[data-status='idle'], #jp-main-statusbar :text('Idle')"
KERNEL_DIALOG = ".jp-Dialog button:has-text('Select')"


def dismiss_kernel_dialog(page) -> bool:
    """Answer JupyterLab's "Select Kernel" dialog if it is showing (it can
    come after the status bar already reads idle); True if it was."""
    select = page.locator(KERNEL_DIALOG)
    if select.count():
        select.first.click()
        return True
    return False


def pick_kernel_or_wait_idle(page, idle: str = IDLE, timeout: float = 90) -> None:
    """Answer JupyterLab's kernel dialog when it asks which kernel to start,
    then wait until the kernel is idle. The dialog may still come later:
    :func:`run_all_cells` and :func:`run_code` answer it too."""
    page.wait_for_selector(f"{KERNEL_DIALOG}, {idle}", timeout=budget_ms(timeout))
    if not dismiss_kernel_dialog(page):
        try:  # the dialog can follow the idle status by a moment: answered as soon as it shows
            page.wait_for_selector(KERNEL_DIALOG, timeout=budget_ms(2))
            dismiss_kernel_dialog(page)
        except Exception:
            pass  # no dialog this time
    page.wait_for_selector(idle, timeout=budget_ms(timeout))


_PROMPTS = "() => [...document.querySelectorAll('.jp-InputPrompt')].map(p => p.innerText)"


def run_all_cells(page, timeout: float = 600) -> None:
    """Run every cell and wait until the prompts have changed (the run began)
    and none is still queued or running."""
    before = page.evaluate(_PROMPTS)
    changed = f"before => ({_PROMPTS})().join('|') !== before.join('|')"
    for attempt in range(3):  # a kernel dialog that opens late swallows the clicks: answer it, run again
        dismiss_kernel_dialog(page)
        try:
            page.get_by_role("menuitem", name="Run").first.click(timeout=budget_ms(10))
            page.get_by_text("Run All Cells", exact=True).click(timeout=budget_ms(10))
            page.wait_for_function(changed, arg=before, timeout=budget_ms(30))
            break
        except Exception:
            page.keyboard.press("Escape")  # close the menu if it is open
            if attempt == 2:
                raise
    page.wait_for_function(
        f"""before => {{ const now = ({_PROMPTS})();
                        return now.join('|') !== before.join('|') && now.every(p => !p.includes('*')); }}""",
        arg=before, timeout=budget_ms(timeout))


def run_code(page, code: str, marker: str, timeout: float = 60) -> str:
    """Append a cell with ``code`` at the end, run it and return the text of
    its output that contains ``marker`` (case-sensitive).

    Only the new cell's outputs count: an earlier cell's (a previous run's
    marker, a widget's text) would answer before this cell has run."""
    dismiss_kernel_dialog(page)
    cells = page.locator(".jp-Notebook .jp-Cell")
    cells.last.click()
    page.keyboard.press("Escape")
    before = cells.count()
    page.keyboard.press("b")  # new cell below, in command mode
    page.wait_for_function("n => document.querySelectorAll('.jp-Notebook .jp-Cell').length > n", arg=before,
                           timeout=budget_ms(30))
    cell = cells.nth(before)  # the new last cell, by index: Shift+Enter appends another below it
    page.keyboard.press("Enter")
    page.keyboard.insert_text(code)
    page.keyboard.press("Shift+Enter")
    output = cell.locator(".jp-OutputArea-output").filter(has_text=re.compile(re.escape(marker)))
    output.last.wait_for(timeout=budget_ms(timeout))
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
