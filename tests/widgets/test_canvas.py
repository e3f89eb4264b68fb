"""GPUCanvas without a browser: events in, frames out, offscreen images."""

import numpy as np

from gpuviz.widgets import GPUCanvas, draw_offscreen


class Quadrants:
    """Clears to a colour; a pointer_down switches the colour."""

    def __init__(self):
        self.colors = [(1, 0, 0, 1), (0, 0, 1, 1)]
        self.current = 0
        self.events = []

    def draw(self, encoder, target, size):
        self.size = size
        render_pass = encoder.begin_render_pass(color_attachments=[{
            "view": target, "load_op": "clear", "store_op": "store", "clear_value": self.colors[self.current]}])
        render_pass.end()

    def handle_event(self, event):
        self.events.append(event["event_type"])
        if event["event_type"] == "pointer_down":
            self.current = 1 - self.current
            return True
        return False


def _canvas():
    drawable = Quadrants()
    canvas = GPUCanvas(drawable, size=(64, 48))
    sent = []
    canvas.send = lambda msg, buffers=None: sent.append((msg, buffers))
    canvas._rfb_handle_msg(canvas, {"type": "resize", "width": 64, "height": 48, "pixel_ratio": 1}, [])
    return canvas, drawable, sent


def test_offscreen_draw_returns_rgba_pixels():
    image = draw_offscreen(Quadrants(), width=40, height=30)
    assert image.shape == (30, 40, 4) and image.dtype == np.uint8
    assert (image.reshape(-1, 4) == [255, 0, 0, 255]).all()


def test_frames_are_sent_as_rgba_jpeg_only_when_drawn():
    canvas, drawable, sent = _canvas()
    assert canvas.max_buffered_frames == 8 and canvas.window.limit == 4
    assert sent == []  # nothing is sent before a draw
    canvas.force_draw()
    assert drawable.size == (64, 48)
    assert len(sent) == 1 and canvas.frames_drawn == 1
    message, buffers = sent[0]
    assert message["type"] == "framebufferdata" and message["mimetype"] == "image/jpeg"
    import simplejpeg

    decoded = simplejpeg.decode_jpeg(bytes(buffers[0]), colorspace="RGB")
    assert decoded.shape == (48, 64, 3)
    assert decoded[..., 0].mean() > 200 and decoded[..., 2].mean() < 60  # red
    assert canvas.get_stats()["sent_frames"] == 1


def test_events_reach_the_drawable_and_request_a_redraw():
    canvas, drawable, sent = _canvas()
    canvas.force_draw()
    pointer = {"type": "pointer_down", "x": 3, "y": 4, "button": 1, "buttons": [1], "modifiers": [],
               "ntouches": 0, "touches": {}, "timestamp": 0}
    canvas._rfb_handle_msg(canvas, pointer, [])
    canvas._process_events()  # what rendercanvas's scheduler does on each tick
    canvas.force_draw()
    assert "pointer_down" in drawable.events
    assert drawable.current == 1
    import simplejpeg

    decoded = simplejpeg.decode_jpeg(bytes(sent[-1][1][0]), colorspace="RGB")
    assert decoded[..., 2].mean() > 200  # now blue


def test_canvas_offscreen_matches_its_drawable():
    canvas, drawable, _ = _canvas()
    drawable.current = 1
    image = canvas.draw_offscreen(width=8, height=8)
    assert (image.reshape(-1, 4) == [0, 0, 255, 255]).all()
