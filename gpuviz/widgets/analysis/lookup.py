"""The ``lookup=`` argument of :class:`~gpuviz.widgets.DataAnalysis`: group
the rows of a fact table by a column of a dimension table, joined on the GPU.

Private to the widget. On the host, once: validate the lookup, give the fact
key and the dimension key one shared dictionary (dense uint32 codes of the
values either side holds; nulls become
:data:`~gpuviz.algorithms.EMPTY_KEY`, which never matches) and code the
dimension column as a group column. On the GPU, once, in a small graph of
its own: a :class:`~gpuviz.GPUHashIndex` over the dimension keys, a
:class:`~gpuviz.GPUHashIndexQuery` of every fact key (-> dimension row or
NOT_FOUND) and a :class:`~gpuviz.GPUGather` of the dimension's group codes
by that row (NOT_FOUND -> the "(no match)" group), written straight into
the widget's group-code column, which the widget's graph reads like any
group column. The join depends on the data alone, so it runs once rather
than on every frame; its statistics are read back once (which also waits
for it before its inputs are freed).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ...algorithms import EMPTY_KEY, GPUGather, GPUHashIndex, GPUHashIndexQuery
from ...errors import GraphTypeError, GraphValidationError
from ...graph import GPUCommandGraph
from ...tables import GPUData, GPUVector
from ...tables.readback import read_many

__all__ = ["LookupSpec", "LookupResult", "NO_MATCH", "parse_lookup", "encode_lookup", "run_lookup"]

#: Label of the group of fact rows whose key is null or not in the dimension table.
NO_MATCH = "(no match)"


@dataclass(frozen=True)
class LookupSpec:
    """One checked ``lookup=`` entry: group by ``dimension[name]`` joined on
    ``fact[fact_key] == dimension[dimension_key]``."""

    name: str
    dimension: pa.Table
    fact_key: str
    dimension_key: str


@dataclass(frozen=True)
class LookupResult:
    """What the GPU join found, read back once at construction.

    Attributes
    ----------
    name, fact_key, dimension_key : str
    dimension_rows : int
    found : int
        Fact rows whose key is in the dimension table.
    null_keys : int
        Fact rows whose key is null (never matched).
    not_found : int
        Fact rows with a key the dimension table lacks.
    """

    name: str
    fact_key: str
    dimension_key: str
    dimension_rows: int
    found: int
    null_keys: int
    not_found: int

    def as_dict(self) -> dict:
        return dict(name=self.name, fact_key=self.fact_key, dimension_key=self.dimension_key,
                    dimension_rows=self.dimension_rows, found=self.found, null_keys=self.null_keys,
                    not_found=self.not_found)


def parse_lookup(lookup, *, group, names, to_table) -> tuple:
    """``(spec or None, group)``: the checked lookup entry and the group
    column (the lookup's name when ``group`` is None). ``names`` are the fact
    table's columns; ``to_table`` converts the dimension table."""
    if lookup is None:
        return None, group
    if not isinstance(lookup, dict):
        raise GraphTypeError(f"DataAnalysis lookup= must be a dict {{name: (dimension_table, key)}} "
                             f"(got {type(lookup).__name__})")
    if len(lookup) != 1:
        raise GraphValidationError(f"DataAnalysis lookup= takes one entry, the group column (got {len(lookup)}: "
                                   f"{', '.join(map(repr, lookup))})")
    (name, entry), = lookup.items()
    if not isinstance(name, str):
        raise GraphTypeError(f"DataAnalysis lookup= name must be a str (got {type(name).__name__})")
    if group is None:
        group = name
    elif group != name:
        raise GraphValidationError(f'DataAnalysis lookup "{name}" is not the group column (group="{group}"): '
                                   f"a lookup is grouped by; pass group=\"{name}\" or leave group out")
    if name in names:
        raise GraphValidationError(f'DataAnalysis lookup "{name}" clashes with a column of the table of that name '
                                   f"(rename the dimension column first)")
    if not isinstance(entry, tuple) or len(entry) not in (2, 3) or not all(isinstance(k, str) for k in entry[1:]):
        raise GraphTypeError(f'DataAnalysis lookup "{name}" must be (dimension_table, key) or (dimension_table, '
                             f"table_key, dimension_key) with str keys (got {entry!r:.80})")
    dimension = to_table(entry[0])
    fact_key, dimension_key = (entry[1], entry[1]) if len(entry) == 2 else entry[1:]
    if name not in dimension.column_names:
        raise GraphValidationError(f'DataAnalysis lookup "{name}" is not a column of the dimension table '
                                   f"(columns: {', '.join(dimension.column_names)})")
    if fact_key not in names:
        raise GraphValidationError(f'DataAnalysis lookup "{name}" key "{fact_key}" is not in the table '
                                   f"(columns: {', '.join(names)})")
    if dimension_key not in dimension.column_names:
        raise GraphValidationError(f'DataAnalysis lookup "{name}" key "{dimension_key}" is not in the dimension '
                                   f"table (columns: {', '.join(dimension.column_names)})")
    if dimension.column_names.count(name) > 1:
        raise GraphValidationError(f'DataAnalysis lookup "{name}" appears {dimension.column_names.count(name)} '
                                   f"times in the dimension table; rename the duplicates first")
    for side, columns, key in (("table", names, fact_key), ("dimension table", dimension.column_names,
                                                             dimension_key)):
        if list(columns).count(key) > 1:
            raise GraphValidationError(f'DataAnalysis lookup "{name}" key "{key}" appears '
                                       f"{list(columns).count(key)} times in the {side}")
    return LookupSpec(name, dimension, fact_key, dimension_key), group


def _key_kind(name: str, what: str, dtype) -> str:
    value = dtype.value_type if pa.types.is_dictionary(dtype) else dtype
    if pa.types.is_integer(value):
        return "int"
    if pa.types.is_string(value) or pa.types.is_large_string(value):
        return "str"
    raise GraphValidationError(f'DataAnalysis lookup "{name}" {what} has type {dtype}: keys must be integer, '
                               f"string or dictionary columns")


def _decoded(column: pa.ChunkedArray) -> pa.ChunkedArray:
    if pa.types.is_dictionary(column.type):
        return pc.cast(column, column.type.value_type)
    return column


def encode_lookup(spec: LookupSpec, fact: pa.ChunkedArray) -> tuple:
    """``(fact words, dimension words)``: uint32 codes of one dictionary
    shared by both key columns, :data:`EMPTY_KEY` for nulls. Raises
    GraphValidationError for key types that cannot be compared and for a
    dimension key that repeats (stating how many rows repeat one)."""
    dim = spec.dimension.column(spec.dimension_key)
    kinds = (_key_kind(spec.name, f'key "{spec.fact_key}" of the table', fact.type),
             _key_kind(spec.name, f'key "{spec.dimension_key}" of the dimension table', dim.type))
    if kinds[0] != kinds[1]:
        raise GraphValidationError(f'DataAnalysis lookup "{spec.name}" key types do not match: table '
                                   f'"{spec.fact_key}" is {fact.type} but dimension "{spec.dimension_key}" is '
                                   f"{dim.type} (cast one side first)")
    fact, dim = _decoded(fact), _decoded(dim)
    if kinds[0] == "int":  # one type for both; a pair that fits no common integer compares as decimal text
        for target in (pa.int64(), pa.uint64(), pa.string()):
            try:
                fact, dim = pc.cast(fact, target), pc.cast(dim, target)
                break
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
                continue
    else:
        fact, dim = pc.cast(fact, pa.large_string()), pc.cast(dim, pa.large_string())
    both = pa.chunked_array(fact.chunks + dim.chunks, type=fact.type)
    codes = pc.dictionary_encode(both.combine_chunks()).indices
    words = pc.fill_null(pc.cast(codes, pa.uint32()), EMPTY_KEY).to_numpy(zero_copy_only=False)
    fact_words, dim_words = words[:len(fact)].astype(np.uint32), words[len(fact):].astype(np.uint32)
    valid = dim_words[dim_words != EMPTY_KEY]
    repeats = int(valid.size - np.unique(valid).size)
    if repeats:
        raise GraphValidationError(
            f'DataAnalysis lookup "{spec.name}" dimension key "{spec.dimension_key}" is not unique: {repeats} of '
            f"its {len(dim_words)} rows repeat an earlier row's key (a lookup needs one dimension row per key; "
            f"drop the duplicates first)")
    return fact_words, dim_words


def run_lookup(device, spec: LookupSpec, *, fact_words, chunk_lengths, dimension_words, dimension_codes,
               codes: GPUVector, no_match: int) -> LookupResult:
    """Join on the GPU once and write every fact row's group code into
    ``codes`` (a vector with ``chunk_lengths``): the dimension row's code,
    or ``no_match`` for a null or missing key. Submits once and reads the
    statistics back (waiting for the join); frees everything it made."""
    made = []

    def upload(array):
        made.append(GPUData.from_numpy(device, np.ascontiguousarray(array, np.uint32)))
        return made[-1]

    cuts = np.cumsum(chunk_lengths)[:-1]
    fact = GPUVector([upload(a) for a in np.split(fact_words, cuts)])
    rows = GPUVector([upload(np.zeros(n, np.uint32)) for n in chunk_lengths])
    index_stats, query_stats = upload(np.zeros(8, np.uint32)), upload(np.zeros(8, np.uint32))
    graph, compiled = GPUCommandGraph(device, id="data-analysis-lookup"), None
    try:
        index = GPUHashIndex(id="lookup-index", keys=graph.import_gpu_data("dimension-keys", upload(dimension_words)),
                             stats=graph.import_gpu_data("index-stats", index_stats))
        index.add_to_graph(graph)
        found = graph.import_gpu_vector("dimension-rows", rows)
        GPUHashIndexQuery(id="lookup-query", index=index, keys=graph.import_gpu_vector("keys", fact), output=found,
                          stats=graph.import_gpu_data("query-stats", query_stats)).add_to_graph(graph)
        GPUGather(id="lookup-codes", indices=found, table=graph.import_gpu_data("dimension-codes",
                                                                                upload(dimension_codes)),
                  output=graph.import_gpu_vector("group-codes", codes), fill=no_match).add_to_graph(graph)
        compiled = graph.compile()
        encoder = device.create_command_encoder(label="data-analysis-lookup")
        compiled.encode(encoder)
        device.queue.submit([encoder.finish()])
        istats, qstats = read_many(device, [index_stats, query_stats])
    finally:
        if compiled is not None:
            compiled.destroy()
        for data in made:
            data.destroy()
    if int(istats[2]) or int(istats[1]):  # the host refused duplicates; an index never drops rows at load 0.5
        raise GraphValidationError(f'DataAnalysis lookup "{spec.name}" index dropped {int(istats[2])} rows and '
                                   f"found {int(istats[1])} duplicate keys")
    found_count, null_keys = int(qstats[0]), int(qstats[1])  # (null keys are the reserved, invalid key)
    return LookupResult(spec.name, spec.fact_key, spec.dimension_key, len(dimension_words), found_count, null_keys,
                        len(fact_words) - found_count - null_keys)
