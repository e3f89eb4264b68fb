"""Frames per second delivered to JupyterLab in headless Chromium while the
mouse drags over a canvas: GPUCanvas against a plain rendercanvas Jupyter
canvas drawing the same content, both in one notebook, dragged in turn
(alternating which goes first) for several rounds, so that both see the same
machine load. Measured with jupyter_rfb's own stats (confirmed frames over
time) and the input-to-frame latency: for each frame the browser confirms,
its display time minus the browser time of the newest pointer event the
frame reflects (both on the page's clock; jupyter_rfb's 20 ms move throttle
included, since an event carries the time of its first coalesced move).

    python -m tests.browser.fps [--seconds 6] [--rounds 3] [--sizes 640x400,1280x720]

GPUCanvas renders reduced frames while the pointer is down (see
gpuviz.widgets.frame_rate); --canvas-kwargs (e.g. "{'interaction_scale': 1.0}")
passes constructor arguments to it. FPS_TRACE=1 adds the median time of each
stage of a frame in the kernel (event arrival, request, draw, readback, send)
and in the browser (send to display, display to confirmation).
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
from pathlib import Path

import numpy as np

from . import lab

SETUP = '''
import json, os, time
os.environ.setdefault("XDG_RUNTIME_DIR", "/tmp")
import numpy as np
import gpuviz
from gpuviz.widgets import GPUCanvas
from rendercanvas.jupyter import JupyterRenderCanvas

device = gpuviz.request_device()
SHADER = """
struct P { center: vec2<f32>, size: vec2<f32> };
@group(0) @binding(0) var<uniform> p: P;
@vertex fn vs(@builtin(vertex_index) i: u32) -> @builtin(position) vec4<f32> {
    let xy = vec2<f32>(f32((i << 1u) & 2u), f32(i & 2u)) * 2.0 - 1.0;
    return vec4<f32>(xy, 0.0, 1.0);
}
@fragment fn fs(@builtin(position) pos: vec4<f32>) -> @location(0) vec4<f32> {
    let uv = pos.xy / p.size;
    let d = distance(pos.xy, p.center * p.size);
    let ring = 0.5 + 0.5 * sin(d * 0.15);
    return vec4<f32>(uv.x, ring * uv.y, 1.0 - uv.x * ring, 1.0);
}
"""

class Rings:
    """A full-screen pattern whose centre follows a drag (JPEG-realistic content)."""
    def __init__(self, size_hint):
        module = device.create_shader_module(code=SHADER)
        self.uniform = device.create_buffer(size=16, usage=0x40 | 0x8)  # UNIFORM | COPY_DST
        self.pipeline = device.create_render_pipeline(layout="auto",
            vertex={"module": module, "entry_point": "vs"},
            fragment={"module": module, "entry_point": "fs", "targets": [{"format": "rgba8unorm"}]})
        self.group = device.create_bind_group(layout=self.pipeline.get_bind_group_layout(0),
                                              entries=[{"binding": 0, "resource": {"buffer": self.uniform}}])
        self.center, self.size_hint, self.event_time = [0.5, 0.5], size_hint, None
    def draw(self, encoder, target, size):
        device.queue.write_buffer(self.uniform, 0, np.array([*self.center, *size], np.float32))
        rp = encoder.begin_render_pass(color_attachments=[{"view": target, "load_op": "clear", "store_op": "store",
                                                           "clear_value": (0, 0, 0, 1)}])
        rp.set_pipeline(self.pipeline); rp.set_bind_group(0, self.group); rp.draw(3); rp.end()
    def handle_event(self, event):
        if event["event_type"] == "pointer_move" and event.get("buttons"):
            w, h = self.size_hint
            self.center = [event["x"] / w, event["y"] / h]
            self.event_time = event.get("time_stamp")  # the browser's performance.now() / 1000
            return True
        return False

class Probe:
    """One canvas of the comparison ("plain" or "gpuviz") and what is measured on it.
    arm() before a drag: the stats restart at the drag's pointer_down; report() after."""
    def __init__(self, kind, width, height, canvas_kwargs=None, trace=False):
        self.kind, self.scene = kind, Rings((width, height))
        if kind == "gpuviz":
            canvas = GPUCanvas(self.scene, size=(width, height), **(canvas_kwargs or {}))
        else:
            canvas = JupyterRenderCanvas(size=(width, height), update_mode="ondemand", min_fps=0)
            context = canvas.get_context("wgpu"); context.configure(device=device, format="rgba8unorm")
            def frame():
                texture = context.get_current_texture(); encoder = device.create_command_encoder()
                self.scene.draw(encoder, texture.create_view(), (texture.width, texture.height))
                device.queue.submit([encoder.finish()])
            canvas.request_draw(frame)
            canvas.add_event_handler(lambda e: self.scene.handle_event(e) and canvas.request_draw(), "*")
        self.canvas, self.armed, self.counts, self.tracing = canvas, False, (0, 0), trace
        # Latency probe: which event each sent frame reflects, and when the browser showed it.
        self.reflected, self.latencies, self.trace = {}, [], []
        send = canvas.send_frame
        def send_frame(array):
            send(array)
            self.reflected[canvas._rfb_frame_index] = self.scene.event_time
        canvas.send_frame = send_frame
        canvas.observe(self._feedback, names="_frame_feedback")
        handle = canvas.handle_event
        def handle_event(event):  # jupyter_rfb calls it as each browser event arrives
            kind = event.get("event_type")
            if kind == "pointer_down" and self.armed:
                self.armed = False
                canvas.reset_stats(); self.latencies.clear(); self.trace.clear()
                self.counts = (getattr(canvas, "reduced_frames", 0), getattr(canvas, "settle_frames", 0))
            elif kind == "pointer_move" and trace:
                self.trace.append(("event", time.time(), event.get("time_stamp")))
            return handle(event)
        canvas.handle_event = handle_event
        if trace:
            self._trace_stages()
    def _feedback(self, change):
        new = change["new"]
        event_time = self.reflected.pop(new.get("index"), None)
        if event_time is not None:
            self.latencies.append((new["localtime"], event_time))
        if self.tracing and new.get("localtime") is not None:
            self.trace.append(("feedback", time.time(), new["localtime"], new.get("index"), new.get("received")))
    def _trace_stages(self):
        def wrap(obj, name, tag, after=None):
            original = getattr(obj, name)
            def wrapped(*args, **kwargs):
                self.trace.append((tag, time.time()))
                result = original(*args, **kwargs)
                if after:
                    self.trace.append((after, time.time(), self.canvas._rfb_frame_index))
                return result
            setattr(obj, name, wrapped)
        wrap(self.canvas, "request_draw", "request")  # the drawable asked for a frame (once per accepted event)
        wrap(self.canvas, "get_frame", "get_frame")
        wrap(self.scene, "draw", "draw", "recorded")
        wrap(self.canvas, "_rc_present_bitmap", "bitmap", "sent")
    def arm(self, tag):
        self.armed = True
        print("ARMED-" + tag)
    def report(self, origin, tag):
        s = self.canvas.get_stats()
        s["latencies"] = [round(shown - (origin + t), 4) for shown, t in self.latencies]
        s["reduced"] = getattr(self.canvas, "reduced_frames", 0) - self.counts[0]
        s["settle"] = getattr(self.canvas, "settle_frames", 0) - self.counts[1]
        s["window"] = getattr(getattr(self.canvas, "window", None), "limit", self.canvas.max_buffered_frames)
        with open(f"trace-{self.kind}.json", "w") as f:
            json.dump([[*entry, origin] if entry[0] == "event" else entry for entry in self.trace], f)
        print("STATS-" + tag, json.dumps(s))
'''

#: One canvas from the environment (FPS_KIND, FPS_W, FPS_H, FPS_CANVAS_KWARGS), named ``canvas``: the browser tests.
SCENE = SETUP + '''
probe = Probe(os.environ["FPS_KIND"], int(os.environ["FPS_W"]), int(os.environ["FPS_H"]),
              eval(os.environ.get("FPS_CANVAS_KWARGS", "{}")))
canvas = probe.canvas
canvas
'''

_VIEWS = ".jp-OutputArea-output img.renderview-view"


def _start(page, workdir: Path) -> None:
    """Run the notebook until both canvases show a frame."""
    for attempt in range(3):  # on a loaded machine "Run All" may be clicked before the kernel takes it
        lab.run_all_cells(page)
        try:
            page.wait_for_function(f"() => document.querySelectorAll({_VIEWS!r}).length == 2",
                                   timeout=lab.budget_ms(90))
            return
        except Exception:
            page.screenshot(path=str(workdir / f"failed-{attempt}.png"))
            if page.locator(".jp-InputPrompt:has-text('[ ]')").count() == 0:
                raise  # it ran and produced no canvases
    raise RuntimeError(f"the fps notebook never ran (see {workdir}/failed-*.png)")


def _drag(page, name: str, index: int, seconds: float, origin: float, tag: str) -> dict:
    # every marker is new: lab.run_code waits for the last output that contains it
    lab.run_code(page, f"{name}.arm({tag!r})", f"ARMED-{tag}")
    view = page.locator(_VIEWS).nth(index)
    lab.wait_painted(page, view)  # jupyter_rfb draws only for a visible view
    lab.wait_settled(page, view)
    moves = lab.drag_in_page(page, view, seconds)
    lab.wait_settled(page, view)  # the frames still in flight land before the report
    text = lab.run_code(page, f"{name}.report({origin!r}, {tag!r})", f"STATS-{tag} {{")
    stats = json.loads(text.split(f"STATS-{tag}", 1)[1].strip())
    stats["moves"] = moves
    return stats


def measure(width: int, height: int, seconds: float, rounds: int, workdir: Path, canvas_kwargs: str = "{}",
            trace: bool = False) -> list:
    """``rounds`` pairs of drags (plain, gpuviz; every other round gpuviz first) at one size."""
    lab.write_notebook(workdir, "fps.ipynb", [
        SETUP, f"plain = Probe('plain', {width}, {height}, trace={trace})\nplain.canvas",
        f"ours = Probe('gpuviz', {width}, {height}, {canvas_kwargs}, trace={trace})\nours.canvas",
        # lab.run_code clicks the last cell: a text cell, not a canvas that would take the keys
        "print('both canvases made')"])
    results = []
    with lab.jupyterlab(workdir, log=workdir / f"lab-{width}x{height}.log") as url:
        with lab.notebook_page(url, "fps.ipynb") as page:
            _start(page, workdir)
            for index in range(2):
                lab.wait_settled(page, page.locator(_VIEWS).nth(index))
            origin = page.evaluate("performance.timeOrigin") / 1000
            try:
                for number in range(rounds):
                    order = [("plain", 0), ("gpuviz", 1)][:: 1 if number % 2 == 0 else -1]
                    pair = {"load": os.getloadavg()[0]}
                    for kind, index in order:
                        stats = _drag(page, "plain" if kind == "plain" else "ours", index, seconds, origin,
                                      f"{kind}{number}")
                        if trace:
                            stats["stages"] = trace_summary(json.loads((workdir / f"trace-{kind}.json").read_text()))
                        pair[kind] = stats
                    results.append(pair)
            except Exception:
                page.screenshot(path=str(workdir / "failed-drag.png"), full_page=True)
                raise
            page.screenshot(path=str(workdir / f"fps-{width}x{height}.png"))
    return results


def trace_summary(trace) -> dict:
    """Median milliseconds of each stage of a frame from a traced probe's record."""
    stages, frame, last_event, events, asked, previous_sent, sent_at = {}, None, None, 0, None, None, {}
    shown = {entry[3]: (entry[1], entry[2], entry[4] if len(entry) > 4 else None)
             for entry in trace if entry[0] == "feedback"}
    keys = ["request", "get_frame", "draw", "recorded", "bitmap", "sent"]
    for entry in trace:
        tag, t = entry[0], entry[1]
        if tag == "event":
            last_event, events = t, events + 1
            if len(entry) > 3 and entry[2] is not None:  # its browser time (page clock) and the page's origin
                stages.setdefault("browser event->kernel arrival", []).append(t - (entry[3] + entry[2]))
        elif tag == "request" and asked is None:  # the first request since the last frame started
            asked = t
        elif tag == "get_frame":
            frame = {"request": asked if asked is not None else t, "get_frame": t, "event": last_event,
                     "events": events}
            asked, events = None, 0
            if previous_sent is not None:
                stages.setdefault("sent->next get_frame", []).append(t - previous_sent)
        elif frame is not None and tag in ("draw", "recorded", "bitmap"):
            frame.setdefault(tag, t)
        elif frame is not None and tag == "sent":
            frame["sent"], previous_sent = t, t
            sent_at[entry[2]] = frame
            for a, b in zip(keys, keys[1:]):
                if a in frame and b in frame:
                    stages.setdefault(f"{a}->{b}", []).append(frame[b] - frame[a])
            if frame["event"] is not None:
                stages.setdefault("last event arrival->get_frame", []).append(frame["get_frame"] - frame["event"])
            stages.setdefault("events per frame", []).append(frame["events"] * 1e-3)
            frame = None
    for index, (received, localtime, arrived) in shown.items():
        if index in sent_at:
            stages.setdefault("sent->browser shown", []).append(localtime - sent_at[index]["sent"])
            if arrived is not None:  # GPUCanvas says when the frame reached the browser
                stages.setdefault("sent->browser received", []).append(arrived - sent_at[index]["sent"])
                stages.setdefault("browser received->shown", []).append(localtime - arrived)
            stages.setdefault("browser shown->feedback in kernel", []).append(received - localtime)
            if sent_at[index]["event"] is not None:
                stages.setdefault("event arrival->shown", []).append(localtime - sent_at[index]["event"])
    return {k: round(float(np.median(v)) * 1e3, 1) for k, v in stages.items()}


def _ms(values, q) -> float:
    return float(np.percentile(values, q)) * 1e3 if values else float("nan")


def summarize(size: str, results: list) -> dict:
    """Medians over the rounds: fps of each, the ratio of each round's pair, latency pooled over the rounds."""
    plain = [r["plain"]["fps"] for r in results]
    ours = [r["gpuviz"]["fps"] for r in results]
    lat_plain = [v for r in results for v in r["plain"]["latencies"]]
    lat_ours = [v for r in results for v in r["gpuviz"]["latencies"]]
    return {"size": size, "rounds": len(results), "plain_fps": float(np.median(plain)),
            "gpuviz_fps": float(np.median(ours)), "ratio": float(np.median([o / p for o, p in zip(ours, plain)])),
            "plain_p50_ms": _ms(lat_plain, 50), "plain_p95_ms": _ms(lat_plain, 95),
            "gpuviz_p50_ms": _ms(lat_ours, 50), "gpuviz_p95_ms": _ms(lat_ours, 95),
            "load": [round(r["load"], 2) for r in results]}


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=6.0)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--sizes", default="640x400,1280x720")
    parser.add_argument("--canvas-kwargs", default="{}", help="GPUCanvas arguments, e.g. \"{'max_buffered_frames': 2}\"")
    parser.add_argument("--json", type=Path, help="also write every round's stats here")
    args = parser.parse_args(argv)
    trace = bool(os.environ.get("FPS_TRACE"))
    print(f"{'size':>10} {'round':>5} {'load':>5} {'plain fps':>9} {'gpuviz fps':>10} {'ratio':>6}"
          f" {'plain p50 ms':>12} {'gpuviz p50 ms':>13} {'gpuviz p95 ms':>13} {'reduced':>7} {'settle':>6}"
          f" {'window':>6}", flush=True)
    summaries, everything = [], {}
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(os.environ.get("FPS_WORKDIR", tmp))
        workdir.mkdir(parents=True, exist_ok=True)
        for size in args.sizes.split(","):
            width, height = (int(v) for v in size.split("x"))
            results = measure(width, height, args.seconds, args.rounds, workdir, args.canvas_kwargs, trace)
            for number, r in enumerate(results):
                p, o = r["plain"], r["gpuviz"]
                print(f"{size:>10} {number:>5} {r['load']:>5.1f} {p['fps']:>9.1f} {o['fps']:>10.1f}"
                      f" {o['fps'] / p['fps']:>6.2f} {_ms(p['latencies'], 50):>12.0f} {_ms(o['latencies'], 50):>13.0f}"
                      f" {_ms(o['latencies'], 95):>13.0f} {o['reduced']:>7} {o['settle']:>6} {o['window']:>6}", flush=True)
                if trace:
                    print("    plain stages (median ms):", p["stages"], flush=True)
                    print("    gpuviz stages (median ms):", o["stages"], flush=True)
            summaries.append(summarize(size, results))
            everything[size] = results
    print(f"\n{'size':>10} {'plain fps':>9} {'gpuviz fps':>10} {'ratio':>6} {'plain p50/p95 ms':>16}"
          f" {'gpuviz p50/p95 ms':>17}  load (1 min, per round)")
    for s in summaries:
        print(f"{s['size']:>10} {s['plain_fps']:>9.1f} {s['gpuviz_fps']:>10.1f} {s['ratio']:>6.2f}"
              f" {s['plain_p50_ms']:>7.0f} / {s['plain_p95_ms']:<6.0f} {s['gpuviz_p50_ms']:>8.0f} / {s['gpuviz_p95_ms']:<6.0f}"
              f"  {s['load']}")
    if args.json:
        args.json.write_text(json.dumps({"summary": summaries, "rounds": everything}, indent=1))


if __name__ == "__main__":
    main()
