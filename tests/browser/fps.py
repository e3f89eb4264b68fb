"""Frames per second delivered to JupyterLab in headless Chromium while the
mouse drags over a canvas: GPUCanvas against a plain rendercanvas Jupyter
canvas drawing the same content, measured in the same harness (jupyter_rfb's
own stats: confirmed frames over time), and the input-to-frame latency:
for each frame the browser confirms, its display time minus the browser
time of the newest pointer event the frame reflects (both on the page's
clock).

    python -m tests.browser.fps [--seconds 8] [--sizes 640x400,1280x720]

GPUCanvas renders reduced frames while the pointer is down (see
gpuviz.widgets.frame_rate); FPS_CANVAS_KWARGS (e.g. "{'interaction_scale': 1.0}")
passes constructor arguments to it.
"""

from __future__ import annotations

import argparse
import os
import ast
import json
import tempfile
from pathlib import Path

import nbformat

from . import lab

SCENE = '''
import os
os.environ.setdefault("XDG_RUNTIME_DIR", "/tmp")
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
    def __init__(self):
        module = device.create_shader_module(code=SHADER)
        self.uniform = device.create_buffer(size=16, usage=0x40 | 0x8)  # UNIFORM | COPY_DST
        self.pipeline = device.create_render_pipeline(layout="auto",
            vertex={"module": module, "entry_point": "vs"},
            fragment={"module": module, "entry_point": "fs", "targets": [{"format": "rgba8unorm"}]})
        self.group = device.create_bind_group(layout=self.pipeline.get_bind_group_layout(0),
                                              entries=[{"binding": 0, "resource": {"buffer": self.uniform}}])
        self.center = [0.5, 0.5]
    def draw(self, encoder, target, size):
        import numpy as np
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

KIND, W, H = os.environ["FPS_KIND"], int(os.environ["FPS_W"]), int(os.environ["FPS_H"])
scene = Rings(); scene.size_hint = (W, H)
if KIND == "gpuviz":
    canvas = GPUCanvas(scene, size=(W, H), **eval(os.environ.get("FPS_CANVAS_KWARGS", "{}")))
else:
    canvas = JupyterRenderCanvas(size=(W, H), update_mode="ondemand", min_fps=0)
    context = canvas.get_context("wgpu"); context.configure(device=device, format="rgba8unorm")
    def frame():
        texture = context.get_current_texture(); encoder = device.create_command_encoder()
        scene.draw(encoder, texture.create_view(), (texture.width, texture.height))
        device.queue.submit([encoder.finish()])
    canvas.request_draw(frame)
    canvas.add_event_handler(lambda e: scene.handle_event(e) and canvas.request_draw(), "*")

# Latency probe: which event each sent frame reflects, and when the browser showed it.
scene.event_time, reflected, latencies = None, {}, []
_send = canvas.send_frame
def send_frame(array):
    _send(array)
    reflected[canvas._rfb_frame_index] = scene.event_time
canvas.send_frame = send_frame
def on_feedback(change):
    event_time = reflected.pop(change["new"].get("index"), None)
    if event_time is not None:
        latencies.append((change["new"]["localtime"], event_time))
canvas.observe(on_feedback, names="_frame_feedback")

# Optional stage trace (FPS_TRACE=1): wall-clock stamps of each stage of a frame, summarised by trace_summary().
trace = []
if os.environ.get("FPS_TRACE"):
    import time
    def _wrap(obj, name, tag, after=None):
        original = getattr(obj, name)
        def wrapped(*args, **kwargs):
            trace.append((tag, time.time()))
            result = original(*args, **kwargs)
            if after:
                trace.append((after, time.time(), canvas._rfb_frame_index))
            return result
        setattr(obj, name, wrapped)
    _wrap(canvas, "_rc_request_draw", "request")
    _wrap(canvas, "get_frame", "get_frame")
    _wrap(scene, "draw", "draw", "recorded")
    _wrap(canvas, "_rc_present_bitmap", "bitmap", "sent")
    _handle = canvas.handle_event
    def handle_event(event):
        if event.get("event_type") == "pointer_move":
            trace.append(("event", time.time()))
        return _handle(event)
    canvas.handle_event = handle_event
    canvas.observe(lambda c: trace.append(("feedback", time.time(), c["new"].get("localtime"),
                                           c["new"].get("index"))), names="_frame_feedback")
canvas
'''


def measure(kind: str, width: int, height: int, seconds: float, workdir: Path, canvas_kwargs: str = "{}") -> dict:
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [nbformat.v4.new_code_cell(SCENE)]
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(notebook, workdir / "fps.ipynb")
    env = {"FPS_KIND": kind, "FPS_W": str(width), "FPS_H": str(height), "FPS_CANVAS_KWARGS": canvas_kwargs}
    with lab.jupyterlab(workdir, env=env, log=workdir / f"lab-{kind}.log") as url:
        with lab.notebook_page(url, "fps.ipynb") as page:
            image = None
            for attempt in range(3):  # on a loaded machine "Run All" may be clicked before the kernel takes it
                lab.run_all_cells(page)
                try:
                    image = page.wait_for_selector(".jp-OutputArea-output img", timeout=90_000)
                    break
                except Exception:
                    page.screenshot(path=str(workdir / f"failed-{attempt}.png"))
                    if page.locator(".jp-InputPrompt:has-text('[ ]')").count() == 0:
                        raise  # it ran and produced no canvas
            if image is None:
                raise RuntimeError(f"the fps notebook never ran (see {workdir}/failed-*.png)")
            page.wait_for_timeout(2000)
            lab.run_code(page, "canvas.reset_stats(); latencies.clear(); trace.clear(); print('RESET')", "RESET")
            origin = page.evaluate("performance.timeOrigin") / 1000
            moves = lab.drag_in_page(page, image, seconds)
            page.wait_for_timeout(1000)
            text = lab.run_code(
                page, "import numpy as np; s = canvas.get_stats(); "
                f"lat = [shown - ({origin!r} + t) for shown, t in latencies]; "
                "s['latency_p50'] = float(np.median(lat)) if lat else float('nan'); "
                "s['latency_p90'] = float(np.percentile(lat, 90)) if lat else float('nan'); "
                "s['reduced'] = getattr(canvas, 'reduced_frames', 0); "
                "s['settle'] = getattr(canvas, 'settle_frames', 0); "
                f"import json; json.dump(trace, open('trace-{kind}-{width}x{height}.json', 'w')); "
                "print('STATS', s)", "STATS {")
            page.screenshot(path=str(workdir / f"fps-{kind}-{width}x{height}.png"))
    stats = ast.literal_eval(text.split("STATS", 1)[1].strip())
    stats["moves"] = moves
    if os.environ.get("FPS_TRACE"):
        stats["stages"] = trace_summary(json.loads((workdir / f"trace-{kind}-{width}x{height}.json").read_text()))
    return stats


def trace_summary(trace) -> dict:
    """Median milliseconds of each stage of a frame from an FPS_TRACE record."""
    import numpy as np
    stages, frame, last_event, shown = {}, None, None, {}
    for entry in trace:
        if entry[0] == "feedback" and entry[2] is not None:
            shown[entry[3]] = (entry[1], entry[2])
    sent_at, events = {}, 0
    previous_sent = None
    for entry in trace:
        tag, t = entry[0], entry[1]
        if tag == "event":
            last_event, events = t, events + 1
        elif tag == "request":
            frame = {"request": t, "event": last_event, "events": events}
            events = 0
            if previous_sent is not None:
                stages.setdefault("sent->next request", []).append(t - previous_sent)
        elif frame is not None and tag in ("get_frame", "draw", "recorded", "bitmap"):
            frame.setdefault(tag, t)
        elif frame is not None and tag == "sent":
            frame["sent"], previous_sent = t, t
            sent_at[entry[2]] = frame
            keys = ["request", "get_frame", "draw", "recorded", "bitmap", "sent"]
            for a, b in zip(keys, keys[1:]):
                if a in frame and b in frame:
                    stages.setdefault(f"{a}->{b}", []).append(frame[b] - frame[a])
            if frame["event"] is not None:
                stages.setdefault("last event arrival->request", []).append(frame["request"] - frame["event"])
            stages.setdefault("events per frame", []).append(frame["events"] * 1e-3)
            frame = None
    for index, (received, localtime) in shown.items():
        if index in sent_at:
            stages.setdefault("sent->browser shown", []).append(localtime - sent_at[index]["sent"])
            stages.setdefault("browser shown->feedback in kernel", []).append(received - localtime)
            if sent_at[index]["event"] is not None:
                stages.setdefault("event arrival->shown", []).append(localtime - sent_at[index]["event"])
    return {k: round(float(np.median(v)) * 1e3, 1) for k, v in stages.items()}


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=8.0)
    parser.add_argument("--sizes", default="640x400,1280x720")
    parser.add_argument("--canvas-kwargs", default="{}", help="GPUCanvas arguments, e.g. \"{'max_buffered_frames': 2}\"")
    args = parser.parse_args(argv)
    print(f"{'size':>10} {'plain fps':>10} {'gpuviz fps':>11} {'ratio':>6} {'plain rt ms':>12} {'gpuviz rt ms':>13}"
          f" {'plain in->frame p50 ms':>23} {'gpuviz in->frame p50 ms':>24} {'gpuviz p90 ms':>14}"
          f" {'reduced':>8} {'settle':>7}")
    with tempfile.TemporaryDirectory() as tmp:
        tmp = os.environ.get("FPS_WORKDIR", tmp)
        for size in args.sizes.split(","):
            width, height = (int(v) for v in size.split("x"))
            plain = measure("plain", width, height, args.seconds, Path(tmp))
            ours = measure("gpuviz", width, height, args.seconds, Path(tmp), args.canvas_kwargs)
            print(f"{size:>10} {plain['fps']:>10.1f} {ours['fps']:>11.1f} {ours['fps'] / plain['fps']:>6.2f} "
                  f"{plain['roundtrip'] * 1e3:>12.0f} {ours['roundtrip'] * 1e3:>13.0f} "
                  f"{plain['latency_p50'] * 1e3:>23.0f} {ours['latency_p50'] * 1e3:>24.0f} "
                  f"{ours['latency_p90'] * 1e3:>14.0f} {ours['reduced']:>8} {ours['settle']:>7}", flush=True)
            print("  gpuviz stats:", ours, flush=True)
            if "stages" in ours:
                print("  plain stages (median ms):", plain["stages"], flush=True)
                print("  gpuviz stages (median ms):", ours["stages"], flush=True)


if __name__ == "__main__":
    main()
