"""A hypothesis state machine over the graph API (issue 10): create graphs,
upload and alias GPUData, build GPUVectors (fresh or already-imported
buffers), import them, create transients and views, add primitives and
compute nodes, destroy imports, compile, encode (+ submit, timestamps),
encode with overrides, read back and destroy compiled graphs, in any order.

Two properties: no sequence of calls aborts the process (a Rust panic in
wgpu-native kills the interpreter, exit 134), and every call either works or
raises a :class:`gpuviz.GraphError`; after an encode that raised, the
caller's encoder still finishes. An abort would kill pytest, so the machine
runs in a subprocess (``python -m tests.reliability.test_graph_state_machine``):
the test here checks its exit status, the machine checks the error family.
Each step is also written to ``$GRAPH_MACHINE_LOG`` as it starts, so an abort
shows the example that caused it.
"""

import logging
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import wgpu
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,
)

import gpuviz as gv
from gpuviz import (
    ComputeKernel,
    GPUCommandGraph,
    GPUData,
    GPUVector,
    GraphDataView,
    GraphError,
    read_array,
)
from tests.graph.helpers import AFFINE_WGSL

ROOT = Path(__file__).resolve().parents[2]
BU = wgpu.BufferUsage
SETTINGS = settings(max_examples=400, stateful_step_count=40, deadline=None, derandomize=True, database=None,
                    suppress_health_check=list(HealthCheck))
LENGTHS = (0, 1, 3, 4, 17, 64)
IDS = ("a", "b", "c")  # few, so import, transient and node IDs collide
USAGES = (BU.STORAGE | BU.COPY_SRC | BU.COPY_DST, BU.STORAGE | BU.COPY_DST, BU.COPY_SRC | BU.COPY_DST)
TRANSIENT_USAGES = (BU.STORAGE, BU.STORAGE | BU.COPY_SRC, BU.STORAGE | (1 << 20), BU.STORAGE | BU.MAP_READ, 0)
# The affine node reads binding 0 and writes binding 1; it declares them
# honestly (or with an unknown access name, which the graph must refuse).
SOURCE_ACCESSES = ("storage-read", "storage-read", "storage-read-write", "no-such-access")
TARGET_ACCESSES = ("storage-write", "storage-write", "storage-read-write", "no-such-access")
PRIMITIVES = ("scan", "segmented-scan", "compaction", "reduction", "mask", "sort", "segmented-sort", "histogram",
              "group-aggregation", "grid-aggregation")
# The views each primitive() kind takes, in order: (format, rows), "n" rows
# being the primitive's length; fitting primitives upload exactly these.
ROLES = {
    "scan": (("uint32", "n"), ("uint32", "n")), "segmented-scan": (("uint32", "n"),) * 3,
    "compaction": (("uint32", "n"),) * 3 + (("uint32", 1),), "reduction": (("uint32", "n"), ("uint32", 2)),
    "mask": (("uint32", "n"),) * 3, "sort": (("uint32", "n"),) * 4, "segmented-sort": (("uint32", "n"),) * 2,
    "histogram": (("float32", "n"), ("uint32", 4)),
    "group-aggregation": (("uint32", "n"), ("float32", 4), ("float32", "n"), ("uint32", 1)),
    "grid-aggregation": (("float32x2", "n"), ("float32", "n"), ("float32", 4)),
}
# (outputs, inputs) of each kind by position in primitive()'s views: an
# accepted primitive must have no output overlapping another output (or
# itself, across vector chunks) or an input (issue 10, items 5 and 11).
WRITES_READS = {
    "scan": ((1,), (0,)), "segmented-scan": ((1,), (0, 2)), "compaction": ((2, 3), (0, 1)),
    "reduction": ((1,), (0,)), "mask": ((2,), (0, 1)), "sort": ((1, 3), (0, 2)), "segmented-sort": ((1,), (0,)),
    "histogram": ((1,), (0,)), "group-aggregation": ((1, 3), (0, 2)), "grid-aggregation": ((2,), (0, 1)),
}
VECTOR_KINDS = {"scan", "segmented-scan", "compaction", "mask", "histogram", "group-aggregation", "grid-aggregation"}
index = st.integers(0, 31)


def test_no_call_sequence_aborts_or_raises_outside_the_graph_error_family(tmp_path):
    log = tmp_path / "steps.log"
    env = {**os.environ, "XDG_RUNTIME_DIR": os.environ.get("XDG_RUNTIME_DIR", "/tmp"), "GRAPH_MACHINE_LOG": str(log),
           "RUST_BACKTRACE": "0"}
    proc = subprocess.run([sys.executable, "-m", "tests.reliability.test_graph_state_machine"], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=600, check=False)
    if proc.returncode in (134, -6):  # SIGABRT: a Rust panic in wgpu-native
        steps = log.read_text() if log.exists() else "(no step log)"
        lines = proc.stderr.splitlines()
        panic = [text for k, line in enumerate(lines) if "panicked at" in line for text in lines[k:k + 2]]
        raise AssertionError(f"the process aborted (exit {proc.returncode}) in this example:\n{steps}\n"
                             + "\n".join(panic[-4:] or lines[-6:]))
    assert proc.returncode == 0, f"the state machine failed (exit {proc.returncode}):\n{proc.stdout[-8000:]}\n" \
                                 f"{proc.stderr[-8000:]}"


# ------------------------------------------------------------------ the machine
_device = None


def shared_device():
    """One device for every example (requesting one per example is slow)."""
    global _device
    if _device is None:
        _device = gv.request_device()
    return _device


class WgpuErrorLog(logging.Handler):
    """Errors wgpu logs instead of raising (uncaptured validation errors)."""

    def __init__(self):
        super().__init__(logging.ERROR)
        self.messages = []

    def emit(self, record):
        self.messages.append(record.getMessage())


WGPU_ERRORS = WgpuErrorLog()
logging.getLogger("wgpu").addHandler(WGPU_ERRORS)


class Record:
    """One graph under test: its views, import handle IDs, nodes and compiled graph."""

    def __init__(self, graph):
        self.graph, self.views, self.imports, self.nodes, self.compiled = graph, [], [], [], None
        self.sources = {}  # id(view) -> the GPUData or GPUVector it imports
        self.refusals = []  # what add_* accepted that compile must refuse


def pick(seq, i):
    return seq[i % len(seq)]


def data_views(record):
    return [v for v in record.views if isinstance(v, GraphDataView)]


def primitive(kind, prim_id, v):
    """Primitive ``kind`` over the picked views ``v`` (any may not fit: that is the point)."""
    if kind in ("scan", "segmented-scan"):
        return gv.GPUScan(id=prim_id, input=v[0], output=v[1], mode="inclusive" if kind == "scan" else "exclusive",
                         segment_flags=v[2] if kind == "segmented-scan" else None)
    if kind == "compaction":
        return gv.GPUCompaction(id=prim_id, input=v[0], flags=v[1], output=v[2], count=v[3])
    if kind == "reduction":
        return gv.GPUReduction(id=prim_id, input=v[0], output=v[1], operation="extent")
    if kind == "mask":
        return gv.GPUMask(id=prim_id, inputs=[v[0], v[1]], output=v[2], operation="xor")
    if kind == "sort":
        return gv.GPUSort(id=prim_id, keys=v[0], output_keys=v[1], values=v[2], output_values=v[3])
    if kind == "segmented-sort":
        n = getattr(v[0], "length", 0)
        return gv.GPUSegmentedSort(id=prim_id, keys=v[0], output_keys=v[1], offsets=[0, n // 2],
                                   lengths=[n // 2, n - n // 2])
    if kind == "histogram":
        return gv.GPUHistogram(id=prim_id, input=v[0], output=v[1], domain=(0.0, 4.0))
    if kind == "group-aggregation":
        return gv.GPUGroupAggregation(id=prim_id, codes=v[0], output=v[1], operation="sum", values=v[2], overflow=v[3])
    return gv.GPUGridAggregation(id=prim_id, positions=v[0], weights=v[1], output=v[2], grid_size=(2, 2),
                                bounds=(0, 0, 4, 4), operation="mean")


def byte_ranges(view):
    """(physical buffer identity, start, end) of each non-empty chunk of a view."""
    chunks = getattr(view, "views", None) or (() if view is None else (view,))
    return [(id(c.handle.buffer) if c.handle.buffer is not None else id(c.handle), c.byte_offset,
             c.byte_offset + c.byte_length) for c in chunks if c.length]


def overlapping(a, b):
    """Whether two data views share bytes of one physical buffer."""
    return any(x[0] == y[0] and x[1] < y[2] and y[1] < x[2] for x in byte_ranges(a) for y in byte_ranges(b))


def aliased(kind, views):
    """A description of the first output that overlaps another output or an input, else None."""
    writes, reads = WRITES_READS[kind]
    outputs = [(k, r) for k in writes for r in byte_ranges(views[k])]
    others = outputs + [(k, r) for k in reads for r in byte_ranges(views[k])]
    for i, (k, (buf, start, end)) in enumerate(outputs):
        for j, (other, (obuf, ostart, oend)) in enumerate(others):
            if j != i and buf == obuf and start < oend and ostart < end:
                return f"view {k} bytes {start}..{end} overlap view {other} bytes {ostart}..{oend} of one buffer"
    return None


def affine_compile(source, target, declared):
    """Compile callback of a node writing target[i] = source[i] + 1; binds
    ``source`` even when the node did not declare it (``declared`` False)."""
    def compile(ctx):
        n = min(source.length, target.length)
        kernel = ComputeKernel(ctx.device, code=AFFINE_WGSL, label="machine-affine", constants={
            "N": n, "ADD": 1, "IN": ComputeKernel.element_offset(source, ctx.device),
            "OUT": ComputeKernel.element_offset(target, ctx.device)})

        def encode(compute_pass, frame):
            kernel.dispatch(compute_pass, frame, bindings={0: source, 1: target}, workgroups=-(-n // 64))
        return encode
    return compile


class GraphMachine(RuleBasedStateMachine):
    """Random call sequences over graphs, GPUData and GPUVectors on one device."""

    def __init__(self):
        super().__init__()
        self.device = shared_device()
        self.datas, self.vectors, self.graphs = [], [], []
        path = os.environ.get("GRAPH_MACHINE_LOG")
        # this example's steps only, flushed as they start: an abort leaves them
        self.log = open(path, "w") if path else None  # noqa: SIM115 - closed in teardown
        WGPU_ERRORS.messages.clear()

    def attempt(self, step, fn, *args, **kwargs):
        """Call ``fn``: its result, or None when it raised a GraphError (anything
        else propagates and fails the machine)."""
        if self.log:
            self.log.write(step + "\n")
            self.log.flush()
        try:
            return fn(*args, **kwargs)
        except GraphError as exc:
            if self.log:
                self.log.write(f"    -> {type(exc).__name__}: {exc}\n")
            return None

    def building(self, g, has=lambda record: True):
        """A graph that ``has`` what the rule needs, preferring uncompiled ones
        (adding to a compiled graph is refused: every rule probes that too)."""
        records = [r for r in self.graphs if has(r)]
        return pick([r for r in records if r.compiled is None] or records, g)

    # -------------------------------------------------------------- data
    @rule(length=st.sampled_from(LENGTHS), kind=st.sampled_from(["uint32", "float32", "float32x2"]),
          usage=st.sampled_from(USAGES))
    def upload(self, length, kind, usage):
        shape = (length, 2) if kind == "float32x2" else (length,)
        array = (np.arange(np.prod(shape)) % 5).reshape(shape).astype(np.uint32 if kind == "uint32" else np.float32)
        data = self.attempt(f"d{len(self.datas)} = GPUData.from_numpy({kind}, {shape}, usage={int(usage)})",
                            GPUData.from_numpy, self.device, array, usage)
        if data is not None:
            self.datas.append(data)

    @precondition(lambda self: self.datas)
    @rule(i=index, start=st.sampled_from([0, 1, 2, 8]), length=st.sampled_from(LENGTHS))
    def alias(self, i, start, length):
        """A second GPUData over a buffer another one owns (maybe already
        imported, maybe destroyed)."""
        source = pick(self.datas, i)
        data = self.attempt(f"d{len(self.datas)} = GPUData(d{self.datas.index(source)}.buffer, uint32, "
                            f"length={length}, byte_offset={4 * start})", GPUData, source.buffer, format="uint32",
                            length=length, byte_offset=4 * start)
        if data is not None:
            self.datas.append(data)

    @precondition(lambda self: self.datas)
    @rule(picks=st.lists(index, min_size=1, max_size=3))
    def make_vector(self, picks):
        chunks = [pick(self.datas, p) for p in picks]
        names = [f"d{self.datas.index(c)}" for c in chunks]
        vector = self.attempt(f"v{len(self.vectors)} = GPUVector([{', '.join(names)}])", GPUVector, chunks)
        if vector is not None:
            self.vectors.append(vector)

    @precondition(lambda self: self.datas)
    @rule(i=index)
    def destroy_data(self, i):
        data = pick(self.datas, i)
        self.attempt(f"d{self.datas.index(data)}.destroy()", data.destroy)

    @precondition(lambda self: self.datas)
    @rule(i=index)
    def read_data(self, i):
        data = pick(self.datas, i)
        self.attempt(f"read_array(d{self.datas.index(data)})", read_array, self.device, data)

    # -------------------------------------------------------------- building
    @precondition(lambda self: len(self.graphs) < 3)
    @rule()
    def new_graph(self):
        graph = self.attempt(f"g{len(self.graphs)} = GPUCommandGraph()", GPUCommandGraph, self.device,
                             id=f"g{len(self.graphs)}")
        self.graphs.append(Record(graph))

    @precondition(lambda self: self.graphs and self.datas)
    @rule(g=index, i=index, import_id=st.sampled_from(IDS))
    def import_data(self, g, i, import_id):
        record, data = pick(self.graphs, g), pick(self.datas, i)
        step = f"g{self.graphs.index(record)}.import_gpu_data({import_id!r}, d{self.datas.index(data)})"
        view = self.attempt(step, record.graph.import_gpu_data, import_id, data)
        if view is not None:
            record.views.append(view)
            record.sources[id(view)] = data
            record.imports.append(view.handle.id)

    @precondition(lambda self: self.graphs and self.vectors)
    @rule(g=index, i=index, import_id=st.sampled_from(IDS))
    def import_vector(self, g, i, import_id):
        record, vector = pick(self.graphs, g), pick(self.vectors, i)
        step = f"g{self.graphs.index(record)}.import_gpu_vector({import_id!r}, v{self.vectors.index(vector)})"
        view = self.attempt(step, record.graph.import_gpu_vector, import_id, vector)
        if view is not None:
            record.views.append(view)
            record.sources[id(view)] = vector
            record.imports.extend(v.handle.id for v in view.views)

    @precondition(lambda self: self.graphs)
    @rule(g=index, id=st.sampled_from(IDS), byte_length=st.sampled_from([0, 4, 64, 1000]),
          usage=st.sampled_from(TRANSIENT_USAGES), length=st.sampled_from([0, 1, 16]),
          offset=st.sampled_from([0, 4, 60]))
    def transient(self, g, id, byte_length, usage, length, offset):
        record = self.building(g)
        name = f"g{self.graphs.index(record)}"
        handle = self.attempt(f"h = {name}.create_transient_buffer(id={id!r}, byte_length={byte_length}, "
                              f"usage={int(usage)})", record.graph.create_transient_buffer, id=id,
                              byte_length=byte_length, usage=usage)
        if handle is not None:
            self.add_view(record, handle, length, offset)

    @precondition(lambda self: any(data_views(r) for r in self.graphs))
    @rule(g=index, v=index, length=st.sampled_from([0, 1, 3, 16]), offset=st.sampled_from([0, 4, 12, 64]))
    def view_of_handle(self, g, v, length, offset):
        """Another view of a buffer the graph already holds (overlaps likely)."""
        record = self.building(g, data_views)
        self.add_view(record, pick(data_views(record), v).handle, length, offset)

    def add_view(self, record, handle, length, offset):
        view = self.attempt(f"g{self.graphs.index(record)}.create_data_view({handle.id!r}, uint32, length={length}, "
                            f"byte_offset={offset})", record.graph.create_data_view, handle, format="uint32",
                            length=length, byte_offset=offset)
        if view is not None:
            record.views.append(view)

    @precondition(lambda self: any(r.views for r in self.graphs))
    @rule(g=index, kind=st.sampled_from(PRIMITIVES), picks=st.lists(index, min_size=4, max_size=4),
          id=st.sampled_from(IDS))
    def add_primitive(self, g, kind, picks, id):
        record = self.building(g, lambda r: r.views)
        self.add_primitive_of(record, kind, id, [pick(record.views, p) for p in picks])

    @precondition(lambda self: self.graphs)
    @rule(g=index, kind=st.sampled_from(PRIMITIVES), n=st.sampled_from([0, 1, 5, 64, 300]), vector=st.booleans(),
          sources=st.lists(st.tuples(st.sampled_from(["fresh", "reuse", "reimport", "overlapping"]), index),
                           min_size=4, max_size=4),
          prim_id=st.sampled_from(IDS))
    def add_fitting_primitive(self, g, kind, n, vector, sources, prim_id):
        """A primitive whose views have the right formats and lengths: fresh
        uploads, views of the same shape the graph already holds ("reuse"),
        or a second import of such a view's GPUData ("reimport": another
        handle over the same buffer); the last two may alias another role.
        "overlapping" vectors have chunks that view the same bytes."""
        record = self.building(g)
        views = []
        for (fmt, rows), (source, i) in zip(ROLES[kind], sources):
            as_vector = vector and kind in VECTOR_KINDS and rows == "n"
            rows = n if rows == "n" else rows
            same = [v for v in record.views if v.format.name == fmt and v.length == rows
                    and hasattr(v, "views") == as_vector and (source == "reuse" or id(v) in record.sources)]
            if source in ("fresh", "overlapping") or not same:
                view = self.upload_view(record, fmt, rows, as_vector, overlapping=source == "overlapping")
            elif source == "reuse":
                view = pick(same, i)
            else:
                view = self.reimport(record, record.sources[id(pick(same, i))])
            if view is None:
                return
            views.append(view)
        self.add_primitive_of(record, kind, prim_id, views + [None] * (4 - len(views)))

    def reimport(self, record, source):
        before = len(record.views)
        if isinstance(source, GPUVector):
            self.import_vector(self.graphs.index(record), self.vectors.index(source), f"in-{len(record.views)}")
        else:
            self.import_data(self.graphs.index(record), self.datas.index(source), f"in-{len(record.views)}")
        return record.views[-1] if len(record.views) > before else None

    def upload_view(self, record, fmt, rows, as_vector, overlapping=False):
        """Upload ``rows`` of ``fmt`` (as a 3-chunk vector with an empty middle
        chunk, or one GPUData) and import it into ``record``'s graph;
        ``overlapping`` vector chunks all start at byte 0 of one buffer."""
        def array(k):
            shape = (k, 2) if fmt == "float32x2" else (k,)
            return (np.arange(np.prod(shape)) % 3).reshape(shape).astype(np.uint32 if fmt == "uint32" else np.float32)
        before = len(record.views)
        if as_vector:
            lengths = (rows // 2, 0, rows - rows // 2)
            if overlapping:
                whole = GPUData.from_numpy(self.device, array(rows))
                self.datas.append(whole)
                chunks = [GPUData(whole.buffer, format=whole.format, length=k) for k in lengths]
            else:
                chunks = [GPUData.from_numpy(self.device, array(k)) for k in lengths]
            self.datas.extend(chunks)
            self.vectors.append(GPUVector(chunks))
            self.import_vector(self.graphs.index(record), len(self.vectors) - 1, f"in-{len(record.views)}")
        else:
            self.datas.append(GPUData.from_numpy(self.device, array(rows)))
            self.import_data(self.graphs.index(record), len(self.datas) - 1, f"in-{len(record.views)}")
        return record.views[-1] if len(record.views) > before else None

    def add_primitive_of(self, record, kind, prim_id, views):
        name = f"g{self.graphs.index(record)}"
        prim = self.attempt(f"p = {kind}({prim_id!r}, {views})", primitive, kind, prim_id, views)
        if prim is not None:
            nodes = self.attempt(f"p.add_to_graph({name})", prim.add_to_graph, record.graph)
            record.nodes.extend(nodes or ())
            overlap = aliased(kind, views) if nodes is not None else None
            assert overlap is None, f"{kind} {prim_id!r} accepted aliased views: {overlap}"

    @precondition(lambda self: any(data_views(r) for r in self.graphs))
    @rule(g=index, src=index, dst=index, extra=index,
          accesses=st.tuples(st.sampled_from(SOURCE_ACCESSES), st.sampled_from(TARGET_ACCESSES)),
          declared=st.booleans(), also_writes=st.booleans(), depends=st.sampled_from([None, "existing", "missing"]),
          id=st.sampled_from(IDS))
    def add_compute_node(self, g, src, dst, extra, accesses, declared, also_writes, depends, id):
        """An affine node reading ``src`` and writing ``dst`` (two handles: one
        handle bound read-only and writable in one dispatch is the node's own
        WebGPU error); ``declared`` False leaves ``src`` undeclared (the graph's
        "did not declare" error, mid-encode); ``also_writes`` declares a
        second writable view, which the graph must refuse where it overlaps
        ``dst`` (issue 10, item 11)."""
        record = self.building(g, data_views)
        views = data_views(record)
        source, target = pick(views, src), pick(views, src + 1 + dst)  # another view where there is one
        if source.handle is target.handle:
            return
        resources = [(source, accesses[0]), (target, accesses[1])] if declared else [(target, accesses[1])]
        second = pick(data_views(record), extra) if also_writes else None
        if second is not None:
            resources.append((second, "storage-write"))
        depends_on = {None: [], "missing": ["no-such-node"], "existing": record.nodes[-1:]}[depends]
        step = (f"g{self.graphs.index(record)}.add_compute_node(id={id!r}, resources={resources}, "
                f"depends_on={depends_on}, compile=affine({source} -> {target}))")
        node = self.attempt(step, record.graph.add_compute_node, id=id, resources=resources,
                            compile=affine_compile(source, target, declared), depends_on=depends_on)
        if node is not None:
            record.nodes.append(node)
            if second is not None and second != target and overlapping(second, target):
                record.refusals.append(f'node "{id}" declares overlapping writable views {target} and {second}')

    # -------------------------------------------------------------- running
    @precondition(lambda self: any(r.compiled is None for r in self.graphs))
    @rule(g=index)
    def compile(self, g):
        """(Compiling a compiled graph again is probed by every later add.)"""
        record = pick([r for r in self.graphs if r.compiled is None], g)
        compiled = self.attempt(f"c{self.graphs.index(record)} = g{self.graphs.index(record)}.compile()",
                                record.graph.compile)
        if compiled is not None:
            record.compiled = compiled
            assert not record.refusals, f"compile accepted what it must refuse: {record.refusals}"

    def compiled_graphs(self):
        return [r for r in self.graphs if r.compiled is not None]

    @precondition(lambda self: self.compiled_graphs())
    @rule(g=index, submit=st.booleans(), timestamps=st.booleans())
    def encode(self, g, submit, timestamps):
        self.encode_record(pick(self.compiled_graphs(), g), submit, timestamps=timestamps)

    @precondition(lambda self: self.datas and any(r.imports for r in self.compiled_graphs()))
    @rule(g=index, picks=st.lists(st.tuples(index, index), min_size=1, max_size=3), unknown=st.booleans(),
          one_buffer=st.booleans())
    def encode_with_overrides(self, g, picks, unknown, one_buffer):
        """Overrides by import ID: buffers of the compiled size where some
        exist (else any), or (``one_buffer``) one buffer for every picked import."""
        record = pick([r for r in self.compiled_graphs() if r.imports], g)
        handles = record.graph.buffers
        buffers = {}
        for i, j in picks:
            name = pick(record.imports, i)
            fitting = [d.buffer for d in self.datas if d.buffer.size == handles[name].byte_length]
            buffers[name] = pick(fitting or [d.buffer for d in self.datas], j)
        if one_buffer:
            buffers = dict.fromkeys(buffers, next(iter(buffers.values())))
        if unknown:
            buffers["no-such-import"] = self.datas[0].buffer
        self.encode_record(record, True, buffers=buffers)

    def encode_record(self, record, submit, **kwargs):
        name = f"c{self.graphs.index(record)}"
        encoder = self.device.create_command_encoder()
        done = self.attempt(f"{name}.encode(encoder, {kwargs})", record.compiled.encode, encoder, **kwargs)
        # after a refused encode the caller's encoder must still finish (issue 10, item 8)
        self.attempt("encoder.finish()" + (" + submit" if submit else ""), self.finish, encoder,
                     submit and done is not None)

    def finish(self, encoder, submit):
        commands = encoder.finish()
        if submit:
            self.device.queue.submit([commands])

    @precondition(lambda self: self.compiled_graphs())
    @rule(g=index)
    def read_timings(self, g):
        record = pick(self.compiled_graphs(), g)
        self.attempt(f"c{self.graphs.index(record)}.read_timings()", record.compiled.read_timings)

    @precondition(lambda self: self.compiled_graphs())
    @rule(g=index)
    def destroy_compiled(self, g):
        record = pick(self.compiled_graphs(), g)
        self.attempt(f"c{self.graphs.index(record)}.destroy()", record.compiled.destroy)

    @invariant()
    def wgpu_logged_no_error(self):
        assert not WGPU_ERRORS.messages, f"wgpu logged errors: {WGPU_ERRORS.messages}"

    def teardown(self):
        for record in self.compiled_graphs():
            self.attempt("teardown: compiled.destroy()", record.compiled.destroy)
        for data in self.datas:
            self.attempt("teardown: data.destroy()", data.destroy)
        self.device.queue.read_buffer(self.device.create_buffer(size=4, usage=BU.COPY_SRC))  # let the GPU drain
        if self.log:
            self.log.write("teardown done\n")
            self.log.close()


def main() -> int:
    run_state_machine_as_test(GraphMachine, settings=SETTINGS)
    print("graph state machine: no abort, only GraphErrors")
    return 0


if __name__ == "__main__":
    sys.exit(main())
