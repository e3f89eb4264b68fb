"""GPUIndexPickingTarget: IDs drawn by a render node into the target, then
pixel and region passes checked against a numpy painting of the same
rectangles (overlaps, duplicate IDs, empty regions, exact capacity,
overflow), GPU-resident positions changed without recompiling, and IDs from
GPUVisibilityWorkflow drawn without any CPU translation."""

from pathlib import Path

import numpy as np
import pytest
import wgpu

from gpuviz.errors import DeviceMismatchError, GraphStateError, GraphValidationError
from gpuviz.graph import GPUCommandGraph
from gpuviz.render.draw_commands import DrawCommandBuffer
from gpuviz.render.picking import NO_ID, GPUIndexPickingTarget
from gpuviz.tables import GPUData, read_array
from gpuviz.workflows.visibility import GPUVisibilityWorkflow

BU = wgpu.BufferUsage
USAGE = BU.STORAGE | BU.COPY_SRC | BU.COPY_DST
SHADER = (Path(__file__).parent / "picking_rects.wgsl").read_text()
W, H = 24, 16
SENTINEL = 0xDEADBEEF

# (x0, y0, x1, y1) in pixels, object ID, batch ID; drawn in this order (later on top)
RECTS = [((2, 2, 10, 8), 7, 1), ((6, 4, 14, 12), 9, 2), ((16, 1, 20, 5), 7, 3), ((0, 14, 24, 16), 3, 1)]


def upload(device, values, dtype=np.uint32):
    return GPUData.from_numpy(device, np.asarray(values, dtype), USAGE)


def rect_records(rects, size=(W, H)):
    """The shader's Rect records: clip-space box, then (object, batch, 0, 0)."""
    w, h = size
    rows = np.zeros((len(rects), 8), np.uint32)
    for i, ((x0, y0, x1, y1), obj, batch) in enumerate(rects):
        box = np.array([2 * x0 / w - 1, 1 - 2 * y1 / h, 2 * x1 / w - 1, 1 - 2 * y0 / h], np.float32)
        rows[i, :4] = box.view(np.uint32)
        rows[i, 4:6] = (obj, batch)
    return rows.ravel()


def paint(rects, order, size=(W, H), source_ids=False):
    """Oracle: object and batch images after drawing rects[order[i]] in order."""
    w, h = size
    objects = np.full((h, w), NO_ID, np.uint32)
    batches = np.full((h, w), NO_ID, np.uint32)
    for j in order:
        (x0, y0, x1, y1), obj, batch = rects[j]
        objects[y0:y1, x0:x1] = j if source_ids else obj
        batches[y0:y1, x0:x1] = batch
    return objects, batches


def add_draw(graph, target, rects, order, *, instances=None, draws=None, vertex="vs"):
    """A render node drawing instanced rects into the target (direct, or
    indirect from record 0 of ``draws``: (DrawCommandBuffer, its handle))."""
    resources = [(rects, "storage-read"), (order, "storage-read")]
    if draws is not None:
        resources.append((draws[1], "indirect"))

    def compile_draw(ctx):
        module = ctx.device.create_shader_module(code=SHADER)
        pipeline = ctx.device.create_render_pipeline(
            layout="auto", vertex={"module": module, "entry_point": vertex},
            fragment={"module": module, "entry_point": "fs2" if target.batches else "fs1",
                      "targets": target.color_targets()},
            primitive={"topology": "triangle-list"})

        def encode(render_pass, frame):
            group = ctx.device.create_bind_group(layout=pipeline.get_bind_group_layout(0), entries=[
                {"binding": 0, "resource": {"buffer": frame.buffer(rects)}},
                {"binding": 1, "resource": {"buffer": frame.buffer(order)}}])
            render_pass.set_pipeline(pipeline)
            render_pass.set_bind_group(0, group)
            if draws is None:
                render_pass.draw(6, instances)
            else:
                draws[0].draw(render_pass, 0)
        return encode

    return graph.add_render_node(id="draw-ids", resources=resources, compile=compile_draw,
                                 color_attachments=target.color_attachments(graph))


def run(graph):
    compiled = graph.compile()
    encoder = graph.device.create_command_encoder()
    compiled.encode(encoder)
    graph.device.queue.submit([encoder.finish()])
    return compiled


def encode_again(device, compiled):
    encoder = device.create_command_encoder()
    compiled.encode(encoder)
    device.queue.submit([encoder.finish()])


def read_texture(device, texture, size=(W, H)):
    w, h = size
    raw = device.queue.read_texture({"texture": texture}, {"bytes_per_row": 256}, (w, h, 1))
    return np.frombuffer(raw, np.uint32).reshape(h, 64)[:, :w]


def drawn_graph(device, target, rects=RECTS, order=None):
    graph = GPUCommandGraph(device, id="picking")
    order = list(range(len(rects))) if order is None else order
    rv = graph.import_gpu_data("rects", upload(device, rect_records(rects)))
    ov = graph.import_gpu_data("order", upload(device, order))
    add_draw(graph, target, rv, ov, instances=len(order))
    return graph


def region(device, graph, target, name, rect, capacity, *, batches=True, spare=3):
    """Region pass outputs with ``spare`` sentinel words past the capacity."""
    out = {"ids": upload(device, np.full(capacity + spare, SENTINEL)),
           "batches": upload(device, np.full(capacity + spare, SENTINEL)),
           "counters": upload(device, [SENTINEL, SENTINEL, SENTINEL]),
           "rect": upload(device, rect)}
    views = {k: graph.import_gpu_data(f"{name}-{k}", v) for k, v in out.items()}
    ids = graph.create_data_view(views["ids"].handle, format="uint32", length=capacity)
    bats = graph.create_data_view(views["batches"].handle, format="uint32", length=capacity) if batches else None
    counters = views["counters"].handle
    count = graph.create_data_view(counters, format="uint32", length=1, byte_offset=4)
    overflow = graph.create_data_view(counters, format="uint32", length=1, byte_offset=8)
    target.add_region_pass(graph, id=name, rect=views["rect"], output_ids=ids, output_batches=bats, count=count,
                           overflow=overflow)
    return out


def pairs_in(objects, batches, rect):
    x0, y0, x1, y1 = rect
    o = objects[y0:y1, x0:x1].ravel()
    b = batches[y0:y1, x0:x1].ravel()
    keep = o != NO_ID
    return sorted(zip(o[keep].tolist(), b[keep].tolist()))


@pytest.mark.parametrize("batches", [True, False])
def test_attachments_pixels_and_regions_match_the_painting(device, batches):
    """Overlapping rects (the later wins), a duplicate object ID in two
    places, background, pixels outside the target and a region spanning
    all of it; count is the covered pixel total."""
    target = GPUIndexPickingTarget(device, size=(W, H), batches=batches)
    graph = drawn_graph(device, target)
    positions = [(3, 3), (7, 5), (12, 11), (17, 2), (0, 0), (23, 15), (W, 0), (5, H), (2**31, 3)]
    outputs = []
    for k, p in enumerate(positions):
        out = upload(device, [SENTINEL] * 4)
        target.add_pixel_pass(graph, id=f"pixel-{k}", position=graph.import_gpu_data(f"pos-{k}", upload(device, p)),
                              output=graph.create_data_view(graph.import_gpu_data(f"px-{k}", out).handle,
                                                            format="uint32", length=2, byte_offset=4))
        outputs.append(out)
    whole = region(device, graph, target, "whole", (0, 0, W, H), W * H, batches=batches)
    part = region(device, graph, target, "part", (5, 3, 18, 9), 200, batches=batches)
    run(graph)
    objects, batch_image = paint(RECTS, range(len(RECTS)))
    if not batches:
        batch_image = np.full_like(batch_image, NO_ID)
    np.testing.assert_array_equal(read_texture(device, target.object_texture), objects)
    if batches:
        np.testing.assert_array_equal(read_texture(device, target.batch_texture), batch_image)
    for (x, y), out in zip(positions, outputs):
        inside = x < W and y < H
        want = [objects[y, x], batch_image[y, x]] if inside else [NO_ID, NO_ID]
        assert read_array(device, out).tolist() == [SENTINEL, *want, SENTINEL], (x, y)
    for out, rect in ((whole, (0, 0, W, H)), (part, (5, 3, 18, 9))):
        want = pairs_in(objects, batch_image, rect)
        counters = read_array(device, out["counters"]).tolist()
        assert counters == [SENTINEL, len(want), 0]
        ids = read_array(device, out["ids"])
        got_batches = read_array(device, out["batches"]) if batches else np.full(ids.size, NO_ID, np.uint32)
        n = len(want)
        assert sorted(zip(ids[:n].tolist(), got_batches[:n].tolist())) == want
        assert (ids[n:] == SENTINEL).all()


@pytest.mark.parametrize("deficit", [1, 5])
def test_exact_capacity_and_overflow(device, deficit):
    """Capacity == covered pixels: all written, no overflow. Less: count
    still the total, overflow 1, exactly capacity pairs from the painting,
    the words past capacity untouched."""
    target = GPUIndexPickingTarget(device, size=(W, H), batches=True)
    graph = drawn_graph(device, target)
    rect = (4, 2, 12, 10)
    objects, batch_image = paint(RECTS, range(len(RECTS)))
    want = pairs_in(objects, batch_image, rect)
    exact = region(device, graph, target, "exact", rect, len(want))
    short = region(device, graph, target, "short", rect, len(want) - deficit)
    run(graph)
    assert read_array(device, exact["counters"]).tolist() == [SENTINEL, len(want), 0]
    ids, bats = read_array(device, exact["ids"]), read_array(device, exact["batches"])
    assert sorted(zip(ids[:len(want)].tolist(), bats[:len(want)].tolist())) == want
    assert (ids[len(want):] == SENTINEL).all() and (bats[len(want):] == SENTINEL).all()
    assert read_array(device, short["counters"]).tolist() == [SENTINEL, len(want), 1]
    cap = len(want) - deficit
    ids, bats = read_array(device, short["ids"]), read_array(device, short["batches"])
    got = list(zip(ids[:cap].tolist(), bats[:cap].tolist()))
    remaining = list(want)
    for pair in got:  # a sub-multiset of the covered pairs
        remaining.remove(pair)
    assert len(remaining) == deficit
    assert (ids[cap:] == SENTINEL).all() and (bats[cap:] == SENTINEL).all()


@pytest.mark.parametrize("rect", [(5, 5, 5, 9), (9, 3, 4, 8), (W, 0, W + 9, H), (2**31, 2**31, 2**32 - 1, 2**32 - 1),
                                  (20, 8, 24, 13)])
def test_empty_regions_write_nothing(device, rect):
    """Zero-width, inverted, outside-the-target and background-only rects:
    count 0, overflow 0, outputs untouched (counters start as sentinels)."""
    target = GPUIndexPickingTarget(device, size=(W, H))
    graph = drawn_graph(device, target)
    out = region(device, graph, target, "empty", rect, 8, batches=False)
    run(graph)
    assert read_array(device, out["counters"]).tolist() == [SENTINEL, 0, 0]
    assert (read_array(device, out["ids"]) == SENTINEL).all()


def test_positions_and_rects_change_by_buffer_writes(device):
    """The compiled graph is encoded again after new position and rect
    words are written: new results, no recompile."""
    target = GPUIndexPickingTarget(device, size=(W, H), batches=True)
    graph = drawn_graph(device, target)
    position, out = upload(device, [3, 3]), upload(device, [0, 0])
    target.add_pixel_pass(graph, id="pixel", position=graph.import_gpu_data("pos", position),
                          output=graph.import_gpu_data("out", out))
    reg = region(device, graph, target, "reg", (0, 0, 1, 1), 64)
    compiled = run(graph)
    objects, batch_image = paint(RECTS, range(len(RECTS)))
    assert read_array(device, out).tolist() == [7, 1]
    assert read_array(device, reg["counters"])[1] == 0
    for (x, y), rect in (((12, 11), (6, 4, 14, 12)), ((17, 3), (15, 0, 21, 6))):
        device.queue.write_buffer(position.buffer, 0, np.array([x, y], np.uint32).tobytes())
        device.queue.write_buffer(reg["rect"].buffer, 0, np.array(rect, np.uint32).tobytes())
        encode_again(device, compiled)
        assert read_array(device, out).tolist() == [objects[y, x], batch_image[y, x]]
        want = pairs_in(objects, batch_image, rect)
        n = read_array(device, reg["counters"])[1]
        assert n == len(want) <= 64
        got = zip(read_array(device, reg["ids"])[:n].tolist(), read_array(device, reg["batches"])[:n].tolist())
        assert sorted(got) == want


def test_visibility_ids_are_drawn_without_cpu_translation(device):
    """GPUVisibilityWorkflow compacts the kept rect IDs into the order buffer
    and their count into a DrawCommandBuffer's instanceCount; an indirect
    draw writes each instance's compacted ID into the object attachment. The
    region pass returns exactly the kept source IDs."""
    rng = np.random.default_rng(5)
    rects = []
    for j in range(40):
        x0, y0 = int(rng.integers(0, W - 3)), int(rng.integers(0, H - 3))
        rects.append(((x0, y0, x0 + int(rng.integers(1, 4)), y0 + int(rng.integers(1, 4))), 0, j % 3))
    keep = (rng.random(40) < 0.4).astype(np.uint32)
    target = GPUIndexPickingTarget(device, size=(W, H), batches=True)
    graph = GPUCommandGraph(device, id="visible-picking")
    dcb = DrawCommandBuffer(device, type="draw", capacity=1)
    dcb.write(0, vertex_count=6, instance_count=0)
    draws = graph.import_buffer(id="draws", byte_length=dcb.byte_length, usage=dcb.buffer.usage, buffer=dcb.buffer)
    count = graph.create_data_view(draws, format="uint32", length=1, byte_offset=dcb.instance_count_byte_offset(0))
    order = graph.import_gpu_data("order", upload(device, np.full(40, SENTINEL)))
    rv = graph.import_gpu_data("rects", upload(device, rect_records(rects)))
    GPUVisibilityWorkflow(id="vis", masks=[graph.import_gpu_data("keep", upload(device, keep))], output=order,
                          count=count).add_to_graph(graph)
    add_draw(graph, target, rv, order, draws=(dcb, draws), vertex="vs_source")
    out = region(device, graph, target, "all", (0, 0, W, H), W * H)
    run(graph)
    kept = np.flatnonzero(keep)
    objects, batch_image = paint(rects, kept, source_ids=True)
    np.testing.assert_array_equal(read_texture(device, target.object_texture), objects)
    n = read_array(device, out["counters"])[1]
    got = sorted(zip(read_array(device, out["ids"])[:n].tolist(), read_array(device, out["batches"])[:n].tolist()))
    assert got == pairs_in(objects, batch_image, (0, 0, W, H))
    assert set(o for o, _ in got) <= set(kept.tolist())


def test_resize_and_destroy(device):
    target = GPUIndexPickingTarget(device, size=(8, 4), batches=True, label="pick")
    old = target.object_texture
    graph = GPUCommandGraph(device, id="g")
    handles = target.import_into(graph)
    assert handles.objects.size[:2] == (8, 4) and target.import_into(graph) == handles
    assert not target.resize((8, 4)) and target.generation == 0
    assert target.resize((16, 12)) and target.generation == 1
    assert target.object_texture.size[:2] == (16, 12) and target.batch_texture.size[:2] == (16, 12)
    assert target.object_texture is not old
    with pytest.raises(GraphStateError, match=r'GPUIndexPickingTarget "pick" was resized \(generation 1\)'):
        target.import_into(graph)
    fresh = GPUCommandGraph(device, id="fresh")
    assert target.import_into(fresh).objects.size[:2] == (16, 12)
    target.destroy()
    target.destroy()
    with pytest.raises(GraphStateError, match="was destroyed"):
        target.import_into(GPUCommandGraph(device, id="later"))


def test_named_errors(device):
    target = GPUIndexPickingTarget(device, size=(W, H))
    graph = GPUCommandGraph(device, id="errors")
    words = graph.import_gpu_data("words", upload(device, np.zeros(16)))
    view = lambda length, offset=0: graph.create_data_view(words.handle, format="uint32", length=length,  # noqa: E731
                                                           byte_offset=offset)
    floats = graph.import_gpu_data("floats", upload(device, np.zeros(4), np.float32))
    other = graph.import_gpu_data("other", upload(device, np.zeros(16)))
    o = lambda length, offset=0: graph.create_data_view(other.handle, format="uint32", length=length,  # noqa: E731
                                                        byte_offset=offset)
    with pytest.raises(GraphValidationError, match=r'"picking" pixel pass "p" position must be uint32 \(got float32\)'):
        target.add_pixel_pass(graph, id="p", position=floats, output=o(2))
    with pytest.raises(GraphValidationError, match=r"output is shorter than needed \(needs 2 rows, got 1\)"):
        target.add_pixel_pass(graph, id="p", position=view(2), output=o(1))
    with pytest.raises(GraphValidationError, match='output shares buffer "words" with input position'):
        target.add_pixel_pass(graph, id="p", position=view(2), output=view(2, 16))
    with pytest.raises(GraphValidationError, match=r"rect is shorter than needed \(needs 4 rows, got 3\)"):
        target.add_region_pass(graph, id="r", rect=view(3), output_ids=o(4), count=o(1, 32), overflow=o(1, 36))
    with pytest.raises(GraphValidationError, match=r"output_batches is shorter than needed \(needs 4 rows, got 2\)"):
        target.add_region_pass(graph, id="r", rect=view(4), output_ids=o(4), output_batches=o(2, 16),
                               count=o(1, 32), overflow=o(1, 36))
    with pytest.raises(GraphValidationError, match="output_ids and count overlap"):
        target.add_region_pass(graph, id="r", rect=view(4), output_ids=o(4), count=o(1, 8), overflow=o(1, 36))
    with pytest.raises(GraphValidationError, match="must be a GraphDataView"):
        target.add_region_pass(graph, id="r", rect=view(4), output_ids=o(4), count=None, overflow=o(1, 36))
    with pytest.raises(GraphValidationError, match="size 0x4 must be within"):
        GPUIndexPickingTarget(device, size=(0, 4))
    other_device = wgpu.gpu.request_adapter_sync().request_device_sync()
    with pytest.raises(DeviceMismatchError):
        target.import_into(GPUCommandGraph(other_device, id="elsewhere"))


def test_repeated_region_picks_read_back_through_a_readback_ring(device):
    """Two picks of one compiled graph (rect words rewritten between them)
    copy count and pairs into two ring slots in the same encoders, are
    submitted before either is read, and are read back out of order: the
    picking passes themselves never read back."""
    from gpuviz.graph import GPUReadbackRing

    target = GPUIndexPickingTarget(device, size=(W, H), batches=True)
    graph = drawn_graph(device, target)
    capacity = 64
    out = region(device, graph, target, "pick", (0, 0, 1, 1), capacity)
    compiled = graph.compile()
    ring = GPUReadbackRing(device, byte_length=12 + 8 * capacity, slot_count=2, label="picks")
    rects = [(6, 4, 14, 12), (15, 0, 21, 6)]
    slots = []
    for rect in rects:
        device.queue.write_buffer(out["rect"].buffer, 0, np.array(rect, np.uint32).tobytes())
        encoder = device.create_command_encoder()
        compiled.encode(encoder)
        slot = ring.acquire()
        slot.copy(encoder, out["counters"].buffer, byte_length=12)
        slot.copy(encoder, out["ids"].buffer, byte_length=4 * capacity, destination_offset=12)
        slot.copy(encoder, out["batches"].buffer, byte_length=4 * capacity, destination_offset=12 + 4 * capacity)
        device.queue.submit([encoder.finish()])
        slot.map_async()
        slots.append(slot)
    assert ring.free_count == 0
    objects, batch_image = paint(RECTS, range(len(RECTS)))
    for rect, slot in reversed(list(zip(rects, slots))):
        words = np.frombuffer(slot.read(), np.uint32)
        n, overflow = int(words[1]), int(words[2])
        want = pairs_in(objects, batch_image, rect)
        assert (n, overflow) == (len(want), 0)
        ids, bats = words[3:3 + capacity], words[3 + capacity:]
        assert sorted(zip(ids[:n].tolist(), bats[:n].tolist())) == want
    assert ring.free_count == 2
    ring.destroy()
