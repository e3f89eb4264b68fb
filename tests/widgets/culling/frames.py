"""Test helper: one CullingFrame encoded and presented into an offscreen
texture, read back as an (h, w, 4) uint8 image."""

import numpy as np
import wgpu


def render(device, frame, size):
    w, h = size
    texture = device.create_texture(size=(w, h, 1), format="rgba8unorm",
                                    usage=wgpu.TextureUsage.RENDER_ATTACHMENT | wgpu.TextureUsage.COPY_SRC)
    encoder = device.create_command_encoder()
    frame.encode(encoder)
    frame.present(encoder, texture.create_view(), (w, h))
    device.queue.submit([encoder.finish()])
    frame.submitted()  # as a host does after submitting (its readout sample may map)
    data = device.queue.read_texture({"texture": texture}, {"bytes_per_row": 4 * w, "rows_per_image": h}, (w, h, 1))
    texture.destroy()
    return np.frombuffer(data, np.uint8).reshape(h, w, 4)
