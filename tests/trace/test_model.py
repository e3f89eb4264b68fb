"""The trace model: schemas, validation, Trace.from_arrow defaults and named
errors, Arrow (pandas) and Parquet round trips."""

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

from gpuviz.trace.errors import TraceFormatError, TraceSchemaError
from gpuviz.oracles.trace import pack_lanes_reference
from gpuviz.trace.load import load
from gpuviz.trace.model import SPANS_SCHEMA, Trace, assemble, empty_table, table


def small_trace():
    threads = table("threads", {"id": [0, 1], "process": [0, 0], "tid": ["1", "2"], "name": ["a", "b"],
                                "sort_index": [0, 1], "kind": ["thread", "gpu-stream"]})
    processes = table("processes", {"id": [0], "pid": ["9"], "name": ["p"], "labels": [""], "partition": [0]})
    links = table("links", {"source": [0], "target": [3], "kind": ["flow"]})
    return assemble(name=["a", "b", "c", "k"], start_ns=[0, 1, 5, 2], duration_ns=[10, 2, 10, 1],
                    thread=[0, 0, 0, 1], threads=threads, processes=processes, args=['{"x":1}', None, None, None],
                    links=links)


def test_assemble_packs_and_validates():
    t = small_trace()
    assert t.spans.schema == SPANS_SCHEMA
    s = t.spans.to_pydict()
    assert s["id"] == [0, 1, 2, 3] and s["parent"] == [-1, 0, -1, -1]
    assert s["lane"] == [0, 1, 2, 0] and t.report == {"lanes_added": 1}
    assert s["args"] == ['{"x":1}', None, None, None]


@pytest.mark.parametrize("field, value, message", [
    ("duration_ns", -1, "negative"), ("thread", 5, "thread 5 does not exist"), ("parent", 9, "parent out of range"),
])
def test_trace_constructor_names_the_problem(field, value, message):
    t = small_trace()
    cols = t.spans.to_pydict()
    cols[field][1] = value
    spans = pa.Table.from_pydict(cols, schema=SPANS_SCHEMA)
    with pytest.raises(TraceSchemaError, match=message):
        Trace(spans=spans, links=t.links, threads=t.threads, processes=t.processes, counters=t.counters,
              instants=t.instants)


def test_trace_constructor_rejects_wrong_types():
    t = small_trace()
    spans = t.spans.set_column(3, "start_ns", t.spans.column("start_ns").cast(pa.float64()))
    with pytest.raises(TraceSchemaError, match='"start_ns" has type double'):
        Trace(spans=spans, links=t.links, threads=t.threads, processes=t.processes, counters=t.counters,
              instants=t.instants)
    with pytest.raises(TraceSchemaError, match="target span 7"):
        Trace(spans=t.spans, links=table("links", {"source": [0], "target": [7], "kind": ["x"]}), threads=t.threads,
              processes=t.processes, counters=t.counters, instants=t.instants)


def test_from_arrow_minimal_defaults():
    spans = pa.table({"name": ["a", "b", "c"], "start_ns": [0, 2, 5], "duration_ns": [10, 3, 1]})
    t = Trace.from_arrow(spans=spans)
    s = t.spans.to_pydict()
    assert s["process"] == [0, 0, 0] and s["thread"] == [0, 0, 0] and s["category"] == ["", "", ""]
    assert s["parent"] == [-1, 0, 0] and s["depth"] == [0, 1, 1] and s["args"] == [None] * 3
    assert t.threads.num_rows == 1 and t.processes.num_rows == 1


def test_from_arrow_generates_thread_rows_and_keeps_parents():
    spans = pd.DataFrame({"name": ["a", "b", "c"], "start_ns": [0, 0, 1], "duration_ns": [5, 5, 1],
                          "thread": [0, 2, 2], "process": [0, 1, 1], "parent": [-1, -1, 0]})
    t = Trace.from_arrow(spans=spans, links=pa.table({"source": [0], "target": [2]}))
    assert t.threads.num_rows == 3 and t.threads.column("process").to_pylist() == [0, 0, 1]
    assert t.processes.num_rows == 2
    assert t.spans.column("parent").to_pylist() == [-1, -1, 0]     # given parents are kept
    assert t.links.column("kind").to_pylist() == ["link"]
    lane, depth, _, _ = pack_lanes_reference(start=spans.start_ns, duration=spans.duration_ns, thread=spans.thread)
    assert t.spans.column("lane").to_pylist() == lane.tolist()


@pytest.mark.parametrize("spans, links, message", [
    ({"start_ns": [0], "duration_ns": [1]}, None, 'missing required column "name"'),
    ({"name": ["a"], "start_ns": [0.5], "duration_ns": [1]}, None, '"start_ns" must be integer'),
    ({"name": ["a"], "start_ns": [0], "duration_ns": [-1]}, None, '"duration_ns" holds values outside'),
    ({"name": [None], "start_ns": [0], "duration_ns": [1]}, None, '"name" holds 1 nulls'),
    ({"name": ["a"], "start_ns": [0], "duration_ns": [1], "parent": [3]}, None, '"parent" holds values outside'),
    ({"name": ["a"], "start_ns": [2**62 * 2 - 1], "duration_ns": [2**62]}, None, "overflows"),
    ({"name": ["a"], "start_ns": [0], "duration_ns": [1]}, {"source": [0], "target": [1]}, '"target" holds values'),
    ({"name": ["a"], "start_ns": [0], "duration_ns": [1]}, {"source": [0]}, 'missing required column "target"'),
])
def test_from_arrow_named_errors(spans, links, message):
    with pytest.raises(TraceSchemaError, match=message) as info:
        Trace.from_arrow(spans=pa.table(spans), links=None if links is None else pa.table(links))
    assert isinstance(info.value, ValueError) and isinstance(info.value, TraceFormatError)


def test_arrow_round_trip_through_pandas_and_from_arrow():
    t = small_trace()
    back = Trace.from_arrow(spans=t.spans.to_pandas(), links=t.links, threads=t.threads.to_pandas(),
                            processes=t.processes)
    for name in ("spans", "links", "threads", "processes"):
        assert getattr(back, name).equals(getattr(t, name)), name


def test_parquet_round_trip(tmp_path, traces_dir):
    t = load(traces_dir / "kineto_alexnet_cuda.json.gz")
    t.to_parquet(tmp_path / "pq")
    back = load(tmp_path / "pq")
    for name in ("spans", "links", "threads", "processes", "counters", "instants"):
        assert getattr(back, name).equals(getattr(t, name)), name
    assert back.report == t.report and back.metadata["format"] == "kineto"
    assert load(tmp_path / "pq", format="parquet").span_count == t.span_count


def test_parquet_folder_missing_table(tmp_path):
    small_trace().to_parquet(tmp_path / "pq")
    (tmp_path / "pq" / "links.parquet").unlink()
    with pytest.raises(TraceFormatError, match="lacks links.parquet"):
        load(tmp_path / "pq")


def test_empty_tables_and_bad_format_name(tmp_path):
    assert empty_table("counters").num_rows == 0
    with pytest.raises(TraceFormatError, match="unknown format"):
        load(tmp_path, format="xml")
    assert np.asarray(small_trace().spans.column("incomplete")).sum() == 0


def test_progress_bar_shows_when_asked_and_is_silent_otherwise(traces_dir, capsys):
    path = traces_dir / "kineto_alexnet_cuda.json.gz"
    load(path, progress=True)
    assert "trace import" in capsys.readouterr().err
    load(path, progress=False)
    load(path)                       # 25 KB: under the ~50 MB threshold
    assert capsys.readouterr().err == ""
