"""Conformance of the public API of gpuviz, gpuviz.widgets and gpuviz.arrow.

Walks every public name (``__all__`` where a module has one, else ``dir()``
without underscores; submodules skipped) and the public methods and
properties of every public class, and checks the house conventions of
ARCHITECTURE.md:

(a) a docstring is present;
(b) every public class and function says what it does NOT do: its own
    docstring contains a negative statement ("does not", "never", "not",
    "no", "without", "nothing", "cannot"); error classes are exempt (they
    name a failure, not a behaviour to bound);
(c) keyword-only parameters beyond the first (``self``/``cls`` aside),
    except the signatures in :data:`POSITIONAL` (named by earlier issues or
    established protocols, each with its reason); constructors of classes
    the library makes for the caller (:data:`LIBRARY_MADE`) are not checked;
(d) every primitive that takes ``tuning=`` rejects another type with a
    GraphError that is also a TypeError;
(e) a table of bad calls, each raising a GraphError (and the matching
    builtin).
"""

import inspect
import re
import types

import numpy as np
import pyarrow as pa
import pytest
import wgpu

import gpuviz
import gpuviz.arrow
import gpuviz.trace
import gpuviz.widgets
from gpuviz import (AggregationTuning, GPUBatchSort, GPUCommandGraph, GPUCompaction, GPUData, GPUGridAggregation,
                    GPUGridBinning, GPUGroupAggregation, GPUHistogram, GPUIndexedRangeCompaction, GPUMask,
                    GPUPartitionedIndexedRangeCompaction, GPUReduction, GPUScan, GPUSchema, GPUSegmentedSort,
                    GPUSort, GPUTable, GPUVector, GraphError, ReductionTuning, ScanTuning, SortTuning)

MODULES = (gpuviz, gpuviz.widgets, gpuviz.arrow, gpuviz.trace)
BU = wgpu.BufferUsage

#: A negative statement: what the object does not do.
NEGATIVE = re.compile(r"\b(not|never|no|nothing|without|cannot)\b|n't\b", re.IGNORECASE)

#: Signatures that keep more than one positional parameter, with the reason.
#: The value is the exact positional parameter names (self/cls aside), so the
#: allowance cannot silently grow.
POSITIONAL = {
    "gpuviz.GPUCommandGraph.import_gpu_data": (("id", "data"), "named by issue 2: import_gpu_data(id, data)"),
    "gpuviz.GPUCommandGraph.import_gpu_vector": (("id", "vector"), "named by issue 2: import_gpu_vector(id, vector)"),
    "gpuviz.GPUData.from_numpy": (("device", "array", "usage"),
                                  "named by issue 2: GPUData.from_numpy(device, array, usage=None)"),
    "gpuviz.GPUVector.from_numpy": (("device", "arrays", "usage"),
                                    "the per-chunk form of GPUData.from_numpy, same parameters"),
    "gpuviz.read_array": (("device", "data_or_vector"), "named by issue 2: read_array(device, data_or_vector)"),
    "gpuviz.arrow.table_to_gpu": (("device", "obj"), "named by issue 2: table_to_gpu(device, table)"),
    "gpuviz.arrow.gpu_to_arrow": (("device", "gpu_obj"), "the inverse of table_to_gpu, same (device, object) shape"),
    "gpuviz.arrow.hash_join": (("left", "right"), "named by issue 35: hash_join(left, right, *, on=...) as "
                                                 "pandas.merge(left, right)"),
    "gpuviz.DrawCommandBuffer.draw": (("render_pass", "index"), "named by issue 2: draw(render_pass, i)"),
    # Recording calls take (where to record, what) positionally, as wgpu's own encoder methods do; every
    # algorithm and widget records through them.
    "gpuviz.ComputeKernel.dispatch": (("compute_pass", "frame"), "recording call: (pass, frame) like wgpu's"),
    "gpuviz.ComputeKernel.dispatch_indirect": (("compute_pass", "frame"), "recording call: (pass, frame)"),
    "gpuviz.ReadbackSlot.copy": (("encoder", "source_buffer"),
                                 "recording call: (encoder, source) like copy_buffer_to_buffer"),
    "gpuviz.widgets.DataAnalysis.draw": (("encoder", "target_view", "size"),
                                         "the GPUCanvas drawable protocol: canvas calls draw(encoder, view, size)"),
    # Drawing calls take coordinates positionally, like every 2-D drawing API.
    "gpuviz.RectLayer.add": (("x0", "y0", "x1", "y1"), "drawing call: add(x0, y0, x1, y1, color=)"),
    "gpuviz.PlotOverlay.rect": (("x0", "y0", "x1", "y1"), "drawing call: rect(x0, y0, x1, y1, color=)"),
    "gpuviz.Axis.to_pixel": (("values", "rect"), "a mapping: to_pixel(values, rect) like numpy's interp"),
    "gpuviz.widgets.FrustumCulling.draw": (("encoder", "target_view", "size"),
                                           "the GPUCanvas drawable protocol: canvas calls draw(encoder, view, size)"),
    "gpuviz.widgets.TraceViewer.draw": (("encoder", "target_view", "size"), "the GPUCanvas drawable protocol"),
    "gpuviz.widgets.TraceViewer.pick": (("x", "y"), "named by issue 14: pick(x, y)"),
    "gpuviz.widgets.FrustumCulling.pick": (("x", "y"), "named by issue 15: pick(x, y)"),
    "gpuviz.trace.GPUTraceScene": (("device", "trace"), "named by issue 13: GPUTraceScene(device, trace)"),
    "gpuviz.trace.save": (("trace", "path"), "named by issue 40: save(trace, path), like numpy.save(file, arr)"),
    "gpuviz.trace.GPUTraceInteraction.graph_view": (("graph", "name"), "like import_gpu_data(id, data): a view by name"),
    "gpuviz.trace.GPUTraceFrame.graph_view": (("graph", "name"), "GPUTraceInteraction's, under its earlier name"),
    "gpuviz.ComputeKernel.element_offset": (("view", "device"),
                                            "used by every compile callback as element_offset(view, device)"),
}

#: Classes the library constructs and hands out; callers never construct them,
#: so their constructors' signatures are not public API.
LIBRARY_MADE = {
    "CompiledGPUCommandGraph": "made by GPUCommandGraph.compile()",
    "GraphFrame": "made by CompiledGPUCommandGraph.encode() for node callbacks",
    "GraphStats": "made by CompiledGPUCommandGraph.stats",
    "GraphBufferHandle": "made by GPUCommandGraph.import_buffer / create_transient_buffer",
    "GraphTextureHandle": "made by GPUCommandGraph.import_texture / create_transient_texture",
    "GraphDataView": "made by GPUCommandGraph.create_data_view / import_gpu_data",
    "GraphVectorView": "made by GPUCommandGraph.import_gpu_vector",
    "GraphTextureView": "made by GPUCommandGraph.create_texture_view",
    "NodeCompileContext": "made by the compiler for node compile callbacks",
    "ReadbackSlot": "made by GPUReadbackRing.acquire / try_acquire",
    "DeviceCapabilities": "made by device_capabilities(device)",
}


def public_names(module):
    names = getattr(module, "__all__", None) or [n for n in dir(module) if not n.startswith("_")]
    for name in names:
        obj = getattr(module, name)
        if isinstance(obj, types.ModuleType) or not (inspect.isclass(obj) or inspect.isfunction(obj)):
            continue
        yield f"{module.__name__}.{name}", obj


def members(cls):
    """Public methods and properties that gpuviz itself defines on ``cls`` (its
    own and inherited from gpuviz bases; not those of traitlets, anywidget...)."""
    seen = set()
    for base in cls.__mro__:
        if not base.__module__.startswith("gpuviz"):
            continue
        for name, raw in vars(base).items():
            if name.startswith("_") or name in seen:
                continue
            seen.add(name)
            func = raw.__func__ if isinstance(raw, (classmethod, staticmethod)) else raw
            if isinstance(func, property) or inspect.isfunction(func):
                yield name, func


def name_id(value):
    """Test IDs from qualified names (objects get pytest's default IDs)."""
    return value if isinstance(value, str) else None


def is_error(obj):
    return inspect.isclass(obj) and issubclass(obj, BaseException)


CLASSES_AND_FUNCTIONS = sorted({q: o for m in MODULES for q, o in public_names(m)}.items())
METHODS = sorted((f"{q}.{n}", f) for q, o in CLASSES_AND_FUNCTIONS if inspect.isclass(o) for n, f in members(o))


def test_the_walk_sees_the_api():
    names = {q for q, _ in CLASSES_AND_FUNCTIONS}
    for expected in ("gpuviz.GPUScan", "gpuviz.read_array", "gpuviz.GraphKeyError", "gpuviz.widgets.DataAnalysis",
                     "gpuviz.arrow.table_to_gpu"):
        assert expected in names
    assert "gpuviz.GPUCommandGraph.import_gpu_data" in dict(METHODS)
    assert set(POSITIONAL) <= names | set(dict(METHODS)), "an allow-listed name no longer exists"


# --------------------------------------------------------------- (a), (b)
@pytest.mark.parametrize("qualname, obj", CLASSES_AND_FUNCTIONS + METHODS, ids=name_id)
def test_docstring_present(qualname, obj):
    doc = obj.__doc__ if inspect.isclass(obj) else inspect.getdoc(obj)
    assert doc and doc.strip(), f"{qualname} has no docstring"


@pytest.mark.parametrize("qualname, obj", [(q, o) for q, o in CLASSES_AND_FUNCTIONS if not is_error(o)],
                         ids=name_id)
def test_docstring_says_what_it_does_not_do(qualname, obj):
    doc = obj.__doc__ or ""
    assert NEGATIVE.search(doc), f'{qualname} docstring never says what it does not do ("does not", "never", ...)'


# --------------------------------------------------------------------- (c)
def positional(func, *, bound):
    params = list(inspect.signature(func).parameters.values())
    if bound and params and params[0].name in ("self", "cls"):
        params = params[1:]
    return tuple(p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD))


def signature_cases():
    for qualname, obj in CLASSES_AND_FUNCTIONS:
        if inspect.isfunction(obj):
            yield qualname, obj, False
        elif not is_error(obj) and obj.__name__ not in LIBRARY_MADE:
            yield f"{qualname}.__init__", obj.__init__, True
    for qualname, func in METHODS:
        if inspect.isfunction(func):
            yield qualname, func, True


@pytest.mark.parametrize("qualname, func, bound", list(signature_cases()),
                         ids=name_id)
def test_keyword_only_beyond_the_first_parameter(qualname, func, bound):
    try:
        names = positional(func, bound=bound)
    except (TypeError, ValueError):
        pytest.skip(f"{qualname} has no introspectable signature")
    allowed, reason = POSITIONAL.get(qualname.removesuffix(".__init__"), ((), ""))
    if allowed:
        assert names == allowed, f"{qualname} positional parameters {names} differ from the allowed {allowed}"
        return
    assert len(names) <= 1, f"{qualname} takes {names} positionally; make all but the first keyword-only"


# --------------------------------------------------------------------- (d)
def data_view(graph, name, values, usage=None):
    data = GPUData.from_numpy(graph.device, np.asarray(values), usage=usage)
    return graph.import_gpu_data(name, data)


def u32(graph, name, n=8):
    return data_view(graph, name, np.zeros(n, np.uint32))


def f32(graph, name, n=8, components=1):
    return data_view(graph, name, np.zeros((n, components) if components > 1 else n, np.float32))


def vector(graph, name, lengths=(3, 5)):
    chunks = [np.zeros(n, np.uint32) for n in lengths]
    return graph.import_gpu_vector(name, GPUVector.from_numpy(graph.device, chunks))


def range_args(graph):
    return dict(flags=u32(graph, "flags", 6), ranges=data_view(graph, "ranges", np.array([0, 3, 3, 3], np.uint32)),
                range_count=2, range_layout=(2, 0, 1),
                active_range_ids=data_view(graph, "active", np.array([0, 1], np.uint32)),
                active_range_dispatch=data_view(graph, "dispatch", np.ones(3, np.uint32),
                                                usage=BU.STORAGE | BU.INDIRECT | BU.COPY_DST),
                maximum_range_length=3, output=u32(graph, "out", 6), count=u32(graph, "count", 1))


#: Every primitive taking ``tuning=``: (the tuning class it accepts, a builder
#: that constructs it over small valid views and adds it to the graph).
TUNED = {
    GPUScan: (ScanTuning, lambda g, t: GPUScan(id="p", input=u32(g, "x"), output=u32(g, "y"), tuning=t)),
    GPUCompaction: (ScanTuning, lambda g, t: GPUCompaction(id="p", input=u32(g, "x"), flags=u32(g, "f"),
                                                           output=u32(g, "y"), count=u32(g, "n", 1), tuning=t)),
    GPUIndexedRangeCompaction: (ScanTuning, lambda g, t: GPUIndexedRangeCompaction(id="p", **range_args(g), tuning=t)),
    GPUPartitionedIndexedRangeCompaction: (ScanTuning, lambda g, t: GPUPartitionedIndexedRangeCompaction(
        id="p", **range_args(g), partition_range_ends=[2], tuning=t)),
    GPUReduction: (ReductionTuning, lambda g, t: GPUReduction(id="p", input=u32(g, "x"), output=u32(g, "y", 1),
                                                              tuning=t)),
    GPUSort: (SortTuning, lambda g, t: GPUSort(id="p", keys=u32(g, "k"), output_keys=u32(g, "o"), tuning=t)),
    GPUBatchSort: (SortTuning, lambda g, t: GPUBatchSort(id="p", keys=vector(g, "k"), output_keys=vector(g, "o"),
                                                         tuning=t)),
    GPUSegmentedSort: (SortTuning, lambda g, t: GPUSegmentedSort(id="p", keys=u32(g, "k"), output_keys=u32(g, "o"),
                                                                 offsets=[0, 4], lengths=[4, 4], tuning=t)),
    GPUHistogram: (AggregationTuning, lambda g, t: GPUHistogram(id="p", input=f32(g, "x"), output=u32(g, "h", 4),
                                                                bin_count=4, domain=(0.0, 1.0), tuning=t)),
    GPUGroupAggregation: (AggregationTuning, lambda g, t: GPUGroupAggregation(
        id="p", codes=u32(g, "c"), output=u32(g, "o", 4), group_count=4, tuning=t)),
    GPUGridBinning: (AggregationTuning, lambda g, t: GPUGridBinning(
        id="p", positions=f32(g, "xy", components=2), output=u32(g, "o", 6), grid_size=(3, 2),
        bounds=(0.0, 0.0, 1.0, 1.0), tuning=t)),
    GPUGridAggregation: (AggregationTuning, lambda g, t: GPUGridAggregation(
        id="p", positions=f32(g, "xy", components=2), weights=f32(g, "w"), output=f32(g, "o", 6),
        grid_size=(3, 2), bounds=(0.0, 0.0, 1.0, 1.0), operation="sum", tuning=t)),
    gpuviz.GPUHashJoin: (ScanTuning, lambda g, t: gpuviz.GPUHashJoin(
        id="p", left_keys=u32(g, "k"), index=gpuviz.GPUHashIndex(id="p-index", keys=u32(g, "rk")),
        pairs=f32(g, "pairs", 4, components=2), count=u32(g, "n", 1), capacity=4, tuning=t)),
    gpuviz.GPUBatchHashJoin: (ScanTuning, lambda g, t: gpuviz.GPUBatchHashJoin(
        id="p", left_keys=vector(g, "k"), index=gpuviz.GPUBatchHashIndex(id="p-index", keys=vector(g, "rk")),
        pairs=vector(g, "pairs"), counts=u32(g, "n", 2), tuning=t)),
}
TUNINGS = (ScanTuning, SortTuning, ReductionTuning, AggregationTuning)


def test_every_tuned_primitive_is_covered():
    tuned = {obj for _, obj in CLASSES_AND_FUNCTIONS
             if inspect.isclass(obj) and "tuning" in inspect.signature(obj.__init__).parameters}
    assert tuned == set(TUNED)


@pytest.mark.parametrize("primitive", list(TUNED), ids=lambda c: c.__name__)
def test_the_accepted_tuning_builds(device, primitive):
    accepted, build = TUNED[primitive]
    build(GPUCommandGraph(device, id="tuned"), accepted())  # the builders themselves are valid


@pytest.mark.parametrize("primitive, wrong", [(p, w) for p, (accepted, _) in TUNED.items()
                                               for w in (*TUNINGS, dict, str) if w is not accepted],
                         ids=lambda c: c.__name__)
def test_wrong_tuning_type_is_a_type_error(device, primitive, wrong):
    _accepted, build = TUNED[primitive]
    tuning = {"dict": {"rows": 8}, "str": "fast"}.get(wrong.__name__) or wrong()
    with pytest.raises(GraphError) as info:
        build(GPUCommandGraph(device, id="tuned"), tuning)
    assert isinstance(info.value, TypeError), f"{primitive.__name__} tuning={tuning!r}: {info.value!r}"
    assert primitive.__name__ in str(info.value) and type(tuning).__name__ in str(info.value)


# --------------------------------------------------------------------- (e)
def _table(device):
    column = GPUData.from_numpy(device, np.zeros(2, np.float32))
    return GPUTable(batches=[gpuviz.GPURecordBatch(columns={"x": column})])


def _dcb(device):
    return gpuviz.DrawCommandBuffer(device, capacity=5, label="d")


#: (case, call(device, graph), family class, builtin it must also be).
BAD_CALLS = [
    ("from_numpy-float64", lambda d, g: GPUData.from_numpy(d, np.zeros(3, np.float64)),
     gpuviz.GraphValidationError, ValueError),
    ("from_numpy-bad-shape", lambda d, g: GPUData.from_numpy(d, np.zeros((2, 5), np.uint32)),
     gpuviz.GraphValidationError, ValueError),
    ("from_numpy-bool", lambda d, g: GPUData.from_numpy(d, np.zeros(3, bool)), gpuviz.GraphValidationError, ValueError),
    ("gpu-data-non-integer-length", lambda d, g: GPUData(d.create_buffer(size=16, usage=BU.STORAGE), format="uint32",
                                                         length=2.0), gpuviz.GraphTypeError, TypeError),
    ("table-unknown-column", lambda d, g: _table(d).column("fare"), gpuviz.GraphKeyError, KeyError),
    ("batch-unknown-column", lambda d, g: _table(d).batches[0].column("fare"), gpuviz.GraphKeyError, KeyError),
    ("schema-unknown-field", lambda d, g: GPUSchema({"x": "uint32"})["fare"], gpuviz.GraphKeyError, KeyError),
    ("format-unknown-name", lambda d, g: gpuviz.GPUVectorFormat.get("float64"), gpuviz.GraphValidationError,
     ValueError),
    ("format-no-numpy-match", lambda d, g: gpuviz.GPUVectorFormat.from_numpy(np.int64),
     gpuviz.GraphValidationError, ValueError),
    ("schema-unknown-format", lambda d, g: GPUSchema({"x": "int64"}), gpuviz.GraphValidationError, ValueError),
    ("dcb-index-out-of-range", lambda d, g: _dcb(d).record_byte_offset(5), gpuviz.GraphIndexError, IndexError),
    ("dcb-negative-index", lambda d, g: _dcb(d).instance_count_byte_offset(-1), gpuviz.GraphIndexError, IndexError),
    ("dcb-index-not-integer", lambda d, g: _dcb(d).record_byte_offset(1.5), gpuviz.GraphTypeError, TypeError),
    ("dcb-write-past-capacity", lambda d, g: _dcb(d).write_records(np.zeros((2, 4), np.uint32), first_record=4),
     gpuviz.GraphIndexError, IndexError),
    ("dcb-unknown-type", lambda d, g: gpuviz.DrawCommandBuffer(d, type="mesh", capacity=1),
     gpuviz.GraphValidationError, ValueError),
    ("read-array-wrong-type", lambda d, g: gpuviz.read_array(d, np.zeros(3)), gpuviz.GraphTypeError, TypeError),
    ("table-to-gpu-wrong-type", lambda d, g: gpuviz.arrow.table_to_gpu(d, [1, 2]), gpuviz.GraphTypeError, TypeError),
    ("gpu-to-arrow-wrong-type", lambda d, g: gpuviz.arrow.gpu_to_arrow(d, np.zeros(2)), gpuviz.GraphTypeError,
     TypeError),
    ("graph-not-a-device", lambda d, g: GPUCommandGraph(object(), id="g"), gpuviz.DeviceMismatchError, ValueError),
    ("import-gpu-data-wrong-type", lambda d, g: g.import_gpu_data("x", np.zeros(3)), GraphError, TypeError),
    ("mask-unknown-operation", lambda d, g: GPUMask(id="m", inputs=[u32(g, "a")], output=u32(g, "o"),
                                                     operation="nand"), gpuviz.GraphValidationError, ValueError),
    ("reduction-unknown-operation", lambda d, g: GPUReduction(id="r", input=u32(g, "x"), output=u32(g, "y", 1),
                                                               operation="median"), gpuviz.GraphValidationError,
     ValueError),
    ("group-aggregation-unknown-operation", lambda d, g: GPUGroupAggregation(
        id="a", codes=u32(g, "c"), values=f32(g, "v"), output=f32(g, "o", 4), group_count=4, operation="median"),
     gpuviz.GraphValidationError, ValueError),
    ("grid-aggregation-unknown-operation", lambda d, g: GPUGridAggregation(
        id="a", positions=f32(g, "xy", components=2), weights=f32(g, "w"), output=f32(g, "o", 6), grid_size=(3, 2),
        bounds=(0.0, 0.0, 1.0, 1.0), operation="median"), gpuviz.GraphValidationError, ValueError),
    ("scan-unknown-mode", lambda d, g: GPUScan(id="s", input=u32(g, "x"), output=u32(g, "y"), mode="sideways"),
     gpuviz.GraphValidationError, ValueError),
    ("scan-float-view", lambda d, g: GPUScan(id="s", input=f32(g, "x"), output=u32(g, "y")).add_to_graph(g),
     gpuviz.GraphValidationError, ValueError),
    ("scan-vec2-view", lambda d, g: GPUScan(id="s", input=data_view(g, "x", np.zeros((8, 2), np.uint32)),
                                            output=u32(g, "y")).add_to_graph(g), gpuviz.GraphValidationError,
     ValueError),
    ("sort-unknown-direction", lambda d, g: GPUSort(id="s", keys=u32(g, "k"), output_keys=u32(g, "o"),
                                                     direction="up").add_to_graph(g), gpuviz.GraphValidationError,
     ValueError),
    ("sort-key-bits", lambda d, g: GPUSort(id="s", keys=u32(g, "k"), output_keys=u32(g, "o"),
                                            key_bits=33).add_to_graph(g), gpuviz.GraphValidationError, ValueError),
    ("histogram-no-bins", lambda d, g: GPUHistogram(id="h", input=f32(g, "x"), output=u32(g, "o", 4), bin_count=0,
                                                     domain=(0.0, 1.0)), gpuviz.GraphValidationError, ValueError),
    ("readback-ring-no-slots", lambda d, g: gpuviz.GPUReadbackRing(d, byte_length=16, slot_count=0),
     gpuviz.GraphValidationError, ValueError),
    ("graph-unknown-use", lambda d, g: g.add_compute_node(id="n", resources=[(u32(g, "x"), "storage-sideways")],
                                                          compile=lambda ctx: None), gpuviz.UsageError, ValueError),
    ("data-analysis-wrong-type", lambda d, g: gpuviz.widgets.DataAnalysis([1, 2], x="a", y="b", value="c", device=d),
     GraphError, TypeError),
    ("data-analysis-unknown-column", lambda d, g: gpuviz.widgets.DataAnalysis(
        pa.table({"a": np.arange(4, dtype=np.float32)}), x="fare", y="a", value="a", device=d), gpuviz.GraphValidationError, ValueError),
    ("encode-after-destroy", lambda d, g: _destroyed(g).encode(d.create_command_encoder()), gpuviz.GraphStateError,
     None),
]


def _destroyed(graph):
    compiled = graph.compile()
    compiled.destroy()
    return compiled


@pytest.mark.parametrize("case, call, family, builtin", BAD_CALLS, ids=[c[0] for c in BAD_CALLS])
def test_bad_call_raises_a_graph_error(device, case, call, family, builtin):
    with pytest.raises(GraphError) as info:
        call(device, GPUCommandGraph(device, id="bad-calls"))
    assert isinstance(info.value, family), f"{case}: {info.value!r} is not a {family.__name__}"
    if builtin is not None:
        assert isinstance(info.value, builtin), f"{case}: {info.value!r} is not a {builtin.__name__}"


def test_unknown_adapter_is_a_lookup_error():
    with pytest.raises(GraphError) as info:
        gpuviz.request_device(adapter_name="no-such-adapter-anywhere", shared=False)
    assert isinstance(info.value, LookupError) and '"no-such-adapter-anywhere"' in str(info.value)
