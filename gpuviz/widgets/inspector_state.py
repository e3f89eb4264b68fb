"""What GraphInspector shows, as plain data: the model state its front end
renders (``inspector.js``) and the same state as static HTML.

Kept apart from the widget so that the state can be built and checked
without a browser, a kernel or a GPU.
"""

from __future__ import annotations

import html

__all__ = ["panel_state", "render_html", "summarize_uses", "format_bytes"]


def panel_state(*, compiled, plan, cpu_times, gpu_times, counts, frames, compile_count, compile_seconds_total,
                device_lost) -> dict:
    """The inspector's state: JSON-able, times in µs, sizes in bytes.

    ``plan`` is ``compiled.describe()`` taken when the graph was attached.
    Keys: ``graph`` (id or None), ``destroyed``, ``frames``, ``compile``
    (count, last_ms, total_ms), ``counts`` ([{label, value}]), ``device_lost``
    and, for a live graph, ``passes`` ([{index, kind, nodes}]), ``nodes``
    ([{id, order, pass, kind, cpu_us, gpu_us, share, summary, uses,
    after}]: ``after`` lists the nodes it is ordered after, with the reason), ``frame`` (cpu_us, gpu_us totals, ``basis`` of the shares
    and timeline: "gpu" or "cpu"), ``timestamps`` and ``memory``. Does not
    read anything from the GPU.
    """
    state = {"graph": None, "destroyed": False, "frames": int(frames), "device_lost": device_lost,
             "compile": {"count": int(compile_count), "last_ms": None, "total_ms": compile_seconds_total * 1e3},
             "counts": [{"label": str(label), "value": int(value)} for label, value in counts.items()]}
    if compiled is None:
        return state
    state["graph"] = compiled.id
    if compiled.destroyed:
        state["destroyed"] = True
        return state
    stats = compiled.stats
    state["compile"]["last_ms"] = stats.compile_seconds * 1e3
    state["timestamps"] = bool(stats.capabilities.get("timestamps"))
    after = {}
    for before, later, kind in stats.edges:
        after.setdefault(later, []).append(f"{before} ({kind})")
    state["passes"], state["nodes"] = _nodes(plan, cpu_times, gpu_times, after)
    cpu_total = sum(n["cpu_us"] or 0 for n in state["nodes"])
    gpu_total = sum(n["gpu_us"] or 0 for n in state["nodes"])
    basis = "gpu" if gpu_total > 0 else "cpu"
    total = gpu_total if basis == "gpu" else cpu_total
    for node in state["nodes"]:
        value = node[f"{basis}_us"]
        node["share"] = None if value is None or total <= 0 else value / total
    state["frame"] = {"cpu_us": cpu_total if cpu_times else None, "gpu_us": gpu_total if gpu_times else None,
                      "basis": basis}
    state["memory"] = {
        "logical": stats.logical_transient_bytes, "physical": stats.physical_transient_bytes,
        "reused": stats.reused_bytes, "reuse_percent": stats.reuse_percent, "imported": stats.imported_bytes,
        "logical_count": stats.logical_transient_count, "physical_count": stats.physical_transient_count}
    return state


def _nodes(plan, cpu_times, gpu_times, after) -> tuple:
    passes, nodes = [], []
    for index, gpu_pass in enumerate(plan):
        ids = [node["id"] for node in gpu_pass["nodes"]]
        passes.append({"index": index, "kind": gpu_pass["kind"], "nodes": ids})
        for node in gpu_pass["nodes"]:
            lines = summarize_uses(node["uses"])
            cpu, gpu = cpu_times.get(node["id"]), gpu_times.get(node["id"])
            nodes.append({"id": node["id"], "order": len(nodes), "pass": index, "kind": gpu_pass["kind"],
                          "cpu_us": None if cpu is None else cpu * 1e6, "gpu_us": None if gpu is None else gpu * 1e6,
                          "summary": " · ".join(lines) or "—", "uses": lines,
                          "after": after.get(node["id"], [])})
    return passes, nodes


def summarize_uses(uses) -> list:
    """One line per (use, resource family): chunk resources that differ only in
    a trailing number collapse to ``x-buffer-{0..7}``; repeats show ``×N``."""
    families = {}
    for resource_id, use in uses:
        stem, _, number = resource_id.rpartition("-")
        key = (use, stem) if number.isdigit() and stem else (use, resource_id)
        entry = families.setdefault(key, {"numbers": [], "count": 0, "plain": not (number.isdigit() and stem)})
        entry["count"] += 1
        if not entry["plain"]:
            entry["numbers"].append(int(number))
    lines = []
    for (use, name), entry in families.items():
        numbers = sorted(set(entry["numbers"]))
        if entry["plain"]:
            label = name
        elif len(numbers) == 1:
            label = f"{name}-{numbers[0]}"
        else:
            label = f"{name}-{{{numbers[0]}..{numbers[-1]}}}"
        repeats = entry["count"] if entry["plain"] else entry["count"] // max(1, len(numbers))
        lines.append(f"{use} {label}" + (f" ×{repeats}" if repeats > 1 else ""))
    return lines


def format_bytes(count) -> str:
    """``1.5 MiB`` style (B, KiB, MiB, GiB)."""
    for unit in ("B", "KiB", "MiB", "GiB"):
        if count < 1024 or unit == "GiB":
            return f"{count:,.0f} {unit}" if unit == "B" else f"{count:,.1f} {unit}"
        count /= 1024
    return ""


def _us(value) -> str:
    return "—" if value is None else f"{value:,.1f}"


def _share(value) -> str:
    return "—" if value is None else f"{value * 100:.0f}%"


def render_html(state: dict) -> str:
    """``state`` (see :func:`panel_state`) as compact static HTML; no script."""
    esc = html.escape
    if not state or state.get("graph") is None:
        return "<i>No graph attached.</i>"
    if state["destroyed"]:
        return (f'<div class="gpuviz-inspector-static"><b>CompiledGPUCommandGraph "{esc(state["graph"])}" was '
                f"destroyed</b>: its plan and resources are gone; attach() a compiled graph to inspect it.</div>")
    compiled, memory = state["compile"], state["memory"]
    rows = "".join(
        f"<tr><td>{node['pass']} · {esc(node['kind'])}</td><td><b>{esc(node['id'])}</b><br>"
        f"{'<br>'.join(esc(line) for line in node['uses']) or '—'}</td>"
        f"<td>{_us(node['cpu_us'])}</td><td>{_us(node['gpu_us'])}</td>"
        f"<td>{_share(node['share'])}</td></tr>"
        for node in state["nodes"])
    counts = "".join(f"<li>{esc(c['label'])}: <b>{c['value']:,}</b></li>" for c in state["counts"])
    gpu_note = "" if state["timestamps"] else " (no timestamp-query on this device)"
    return (
        f'<div class="gpuviz-inspector-static" style="font: 12px monospace">'
        f"<b>{esc(state['graph'])}</b> · {len(state['nodes'])} nodes in {len(state['passes'])} passes · "
        f"compiled {compiled['count']}× ({compiled['last_ms']:.1f} ms last) · {state['frames']} frames<br>"
        f"transients: {format_bytes(memory['logical'])} logical → {format_bytes(memory['physical'])} physical "
        f"({format_bytes(memory['reused'])} reused, {memory['reuse_percent']:.0f}%) · "
        f"imports {format_bytes(memory['imported'])}"
        f"<table><thead><tr><th>pass</th><th>node · declared uses</th><th>CPU µs</th><th>GPU µs{gpu_note}</th>"
        f"<th>share</th></tr></thead><tbody>{rows}</tbody></table>"
        + (f"<div>GPU counts (sampled):<ul>{counts}</ul></div>" if counts else "")
        + (f'<div style="color: #c33">{esc(state["device_lost"])}: counts are no longer sampled</div>'
           if state["device_lost"] else "")
        + "</div>")
