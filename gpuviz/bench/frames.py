"""``python -m gpuviz.bench.frames``: the server side of one notebook frame
of :class:`~gpuviz.widgets.DataAnalysis` (``--widget analysis``) or the
trace viewer (``--widget trace``, a synthetic trace of ``--rows`` spans),
without a browser or a kernel.

What GPUCanvas does for each frame the browser shows, step by step on one
offscreen target: *render* (the widget's ``draw`` hook after a pan, which
re-encodes the compiled graph and the presentation pass, then submit and wait
for the GPU), *readback* (texture to a mappable buffer, mapped, as a numpy
array) and *encode* (JPEG as sent while interacting, PNG as the lossless
frame after it), at full size and at the reduced scales an interaction may
pick. Medians over ``--runs`` after one warm-up frame.

    python -m gpuviz.bench.frames --rows 1M --size 1280x720 --scales 1,0.5,0.25
    python -m gpuviz.bench.frames --widget trace --rows 1M

It does not include the websocket, the browser's decode or its display;
those are what ``python -m tests.browser.fps`` measures.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

from .analysis import make_data

__all__ = ["bench_frames", "main"]


def _analysis(device, rows: int, size):
    import pyarrow as pa

    from gpuviz.widgets.analysis.widget import DataAnalysis

    data = make_data(rows)
    table = pa.table({"pickup_x": data["pickup"][:, 0], "pickup_y": data["pickup"][:, 1], "fare": data["fare"],
                      "hour": data["hour"]})
    return DataAnalysis(table, x="pickup_x", y="pickup_y", value="fare", group="hour", bins=256, max_bins=256,
                        grid_size=(512, 512), device=device, size=size)


def _trace_viewer(device, spans: int, size):
    from gpuviz.trace.synthetic import synthetic
    from gpuviz.widgets.trace.widget import TraceViewer

    return TraceViewer(synthetic(spans=spans), size=size, device=device)


WIDGETS = {"analysis": _analysis, "trace": _trace_viewer}
# pixels one pan step drags: past the trace viewer's 3-pixel click slop (a shorter drag is a click,
# which picks and selects instead of panning)
STEPS = {"analysis": 3, "trace": 12}


def _readback(device, texture, width: int, height: int) -> np.ndarray:
    """The texture as an (h, w, 4) uint8 array (rows padded to 256 bytes by wgpu)."""
    data = device.queue.read_texture({"texture": texture}, {"bytes_per_row": width * 4, "rows_per_image": height},
                                     (width, height, 1))
    return np.frombuffer(data, np.uint8).reshape(height, width, 4)


def _frame(widget, device, texture, fence, width, height, step):
    """One pan step: (render s, host s, readback s, image); host = the draw call alone."""
    widget.handle_event({"event_type": "pointer_down", "x": width * 0.3, "y": height * 0.5, "button": 1,
                         "buttons": (1,), "modifiers": ()})
    widget.handle_event({"event_type": "pointer_move", "x": width * 0.3 + step, "y": height * 0.5, "button": 1,
                         "buttons": (1,), "modifiers": ()})
    widget.handle_event({"event_type": "pointer_up", "x": width * 0.3 + step, "y": height * 0.5, "button": 1,
                         "buttons": (), "modifiers": ()})
    started = time.perf_counter()
    encoder = device.create_command_encoder(label="bench-frame")
    widget.draw(encoder, texture.create_view(), (width, height))
    host = time.perf_counter() - started
    device.queue.submit([encoder.finish()])
    device.queue.read_buffer(fence, 0, 4)  # waits for the submitted frame (a 4-byte read after it)
    rendered = time.perf_counter()
    image = _readback(device, texture, width, height)
    return rendered - started, host, time.perf_counter() - rendered, image


def bench_frames(device, *, rows: int, size=(1280, 720), scales=(1.0, 0.5, 0.25), runs: int = 10,
                 widget: str = "analysis") -> list:
    """One row per scale: ``{"scale", "width", "height", "render_s", "readback_s",
    "jpeg_s", "png_s", "jpeg_bytes", "png_bytes", "frame_s"}`` (medians;
    ``frame_s`` = render + readback + JPEG, what an interactive frame costs;
    ``host_s``: the widget's draw call alone, the CPU part of render)."""
    import simplejpeg
    import wgpu
    from jupyter_rfb._png import array2png  # jupyter_rfb's lossless encoder, as the canvas uses it

    step = STEPS[widget]
    widget = WIDGETS[widget](device, rows, size)
    fence = device.create_buffer(size=4, usage=wgpu.BufferUsage.COPY_SRC | wgpu.BufferUsage.COPY_DST)
    out = []
    try:
        for scale in scales:
            width, height = max(1, int(size[0] * scale)), max(1, int(size[1] * scale))
            texture = device.create_texture(size=(width, height, 1), format="rgba8unorm",
                                            usage=wgpu.TextureUsage.RENDER_ATTACHMENT | wgpu.TextureUsage.COPY_SRC)
            samples = {"render_s": [], "host_s": [], "readback_s": [], "jpeg_s": [], "png_s": []}
            for run in range(runs + 1):
                render_s, host_s, readback_s, image = _frame(widget, device, texture, fence, width, height,
                                                             step if run % 2 else -step)
                started = time.perf_counter()
                jpeg = simplejpeg.encode_jpeg(np.ascontiguousarray(image), quality=80, colorspace="RGBA",
                                              colorsubsampling="420", fastdct=True)
                jpeg_s = time.perf_counter() - started
                started = time.perf_counter()
                png = array2png(image[:, :, :3])
                png_s = time.perf_counter() - started
                if run:  # the first frame warms pipelines and label layout
                    for key, value in zip(samples, (render_s, host_s, readback_s, jpeg_s, png_s)):
                        samples[key].append(value)
            row = {key: statistics.median(values) for key, values in samples.items()}
            row.update(scale=scale, width=width, height=height, jpeg_bytes=len(jpeg), png_bytes=len(png))
            row["frame_s"] = row["render_s"] + row["readback_s"] + row["jpeg_s"]
            out.append(row)
            texture.destroy()
    finally:
        fence.destroy()
        widget.close()
    return out


def _count(text: str) -> int:
    text = text.strip().upper()
    factor = {"K": 1_000, "M": 1_000_000}.get(text[-1:], 1)
    return int(float(text[:-1] if factor > 1 else text) * factor)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--widget", choices=sorted(WIDGETS), default="analysis")
    parser.add_argument("--rows", default="1M", help="rows of the table / spans of the trace (e.g. 64K, 1M, 10M)")
    parser.add_argument("--size", default="1280x720", help="full frame size in pixels")
    parser.add_argument("--scales", default="1,0.5,0.25", help="render scales per direction")
    parser.add_argument("--runs", type=int, default=10)
    args = parser.parse_args(argv)

    from gpuviz import request_device

    device = request_device()
    size = tuple(int(v) for v in args.size.lower().split("x"))
    rows = _count(args.rows)
    table = bench_frames(device, rows=rows, size=size, scales=[float(s) for s in args.scales.split(",")],
                         runs=args.runs, widget=args.widget)
    print(f"{args.widget} frame, {rows:,} rows, {size[0]}x{size[1]} full size, median of {args.runs} runs")
    print(f"{'scale':>6} {'pixels':>10} {'render ms':>10} {'host ms':>8} {'readback ms':>12} {'jpeg ms':>8} {'png ms':>7} "
          f"{'frame ms':>9} {'jpeg KiB':>9} {'png KiB':>8}")
    for r in table:
        print(f"{r['scale']:>6.3g} {r['width']}x{r['height']:<5} {r['render_s'] * 1e3:>10.2f} {r['host_s'] * 1e3:>8.2f} "
              f"{r['readback_s'] * 1e3:>12.2f} {r['jpeg_s'] * 1e3:>8.2f} {r['png_s'] * 1e3:>7.1f} "
              f"{r['frame_s'] * 1e3:>9.2f} {r['jpeg_bytes'] / 1024:>9.0f} {r['png_bytes'] / 1024:>8.0f}")
    print("frame = render + readback + JPEG (an interactive frame); PNG is the one lossless frame after it; "
          "host = the widget's draw call (CPU) inside render")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
