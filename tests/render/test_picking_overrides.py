"""GPUIndexPickingTarget's pass bind groups are reused between encodings of
one compiled graph (keyed by the encoding's resource mapping): an override
of the pass's output buffer gets its own group, and the compiled output is
used again afterwards."""

import numpy as np

from gpuviz.render.picking import GPUIndexPickingTarget
from gpuviz.tables import read_array

from .test_picking import H, RECTS, W, drawn_graph, paint, upload


def test_pixel_pass_follows_an_output_override_and_comes_back(device):
    target = GPUIndexPickingTarget(device, size=(W, H), batches=True)
    graph = drawn_graph(device, target)
    position, out, other = upload(device, [3, 3]), upload(device, [0, 0]), upload(device, [0, 0])
    target.add_pixel_pass(graph, id="pixel", position=graph.import_gpu_data("pos", position),
                          output=graph.import_gpu_data("out", out))
    compiled = graph.compile()
    objects, batches = paint(RECTS, range(len(RECTS)))

    def encode(x, y, **overrides):
        device.queue.write_buffer(position.buffer, 0, np.array([x, y], np.uint32).tobytes())
        encoder = device.create_command_encoder()
        compiled.encode(encoder, **overrides)
        device.queue.submit([encoder.finish()])

    encode(3, 3)
    encode(3, 3)  # the reused group
    assert read_array(device, out).tolist() == [objects[3, 3], batches[3, 3]]
    encode(12, 11, buffers={"out": other.buffer})
    assert read_array(device, other).tolist() == [objects[11, 12], batches[11, 12]]
    assert read_array(device, out).tolist() == [objects[3, 3], batches[3, 3]]  # not written by the override
    encode(17, 3)
    assert read_array(device, out).tolist() == [objects[3, 17], batches[3, 17]]
    assert read_array(device, other).tolist() == [objects[11, 12], batches[11, 12]]
    compiled.destroy()
    target.destroy()
