// GPUTraceInteraction "{id}-edges": the links a frame draws, appended at the
// EDGES instance count (order unspecified). Per link, each endpoint
// resolves by its row's shown code (written by the predicate):
//   1 shown                 -> itself
//   0 hidden, process open  -> anchors[row] (closest shown ancestor, GPUAncestorProjection), or unresolved
//   2 / 3 collapsed process -> its process's summary row (flag), in view (2) or not (3)
// A link is kept when both ends resolve, at least one is in view, and the
// ends are not the same shown span. Record: (source point row, target point
// row, link ID, flags): flag 1 = the source is a summary-row point (the row
// is the source span itself), flag 2 = the same for the target. Appends are
// reserved once per workgroup (one global atomic per workgroup).

override LINKS: u32;
override EDGES_WORD: u32;  // instance_count word of record EDGES in commands
const UNRESOLVED: u32 = 0xffffffffu;

@group(0) @binding(0) var<storage, read> links: array<vec4<u32>>;  // source row, target row, kind, link ID
@group(0) @binding(1) var<storage, read> shown: array<u32>;
@group(0) @binding(2) var<storage, read> anchors: array<u32>;
@group(0) @binding(3) var<storage, read_write> edges: array<vec4<u32>>;
@group(0) @binding(4) var<storage, read_write> commands: array<atomic<u32>>;

// (point row, 1 = summary point, 1 = in view); row UNRESOLVED when none.
fn resolve(row: u32) -> vec3<u32> {
    let code = shown[row];
    if (code >= 2u) {
        return vec3<u32>(row, 1u, select(0u, 1u, code == 2u));
    }
    if (code == 1u) {
        return vec3<u32>(row, 0u, 1u);
    }
    return vec3<u32>(anchors[row], 0u, 1u);
}

var<workgroup> kept: atomic<u32>;
var<workgroup> base: u32;

// (source point, target point, flags) of link k, or source UNRESOLVED when not kept.
fn edge(k: u32) -> vec3<u32> {
    if (k >= LINKS) {
        return vec3<u32>(UNRESOLVED, 0u, 0u);
    }
    let link = links[k];
    let a = resolve(link.x);
    let b = resolve(link.y);
    if (a.x == UNRESOLVED || b.x == UNRESOLVED || (a.z == 0u && b.z == 0u)
        || (a.y == 0u && b.y == 0u && a.x == b.x)) {
        return vec3<u32>(UNRESOLVED, 0u, 0u);
    }
    return vec3<u32>(a.x, b.x, a.y | (b.y << 1u));
}

@compute @workgroup_size(256)
fn main(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3<u32>,
        @builtin(num_workgroups) nwg: vec3<u32>) {
    let k = (wid.x + wid.y * nwg.x) * 256u + lid;
    if (lid == 0u) {
        atomicStore(&kept, 0u);
    }
    workgroupBarrier();
    let e = edge(k);
    var slot = 0u;
    if (e.x != UNRESOLVED) {
        slot = atomicAdd(&kept, 1u);
    }
    workgroupBarrier();
    if (lid == 0u) {
        let count = atomicLoad(&kept);
        base = select(0u, atomicAdd(&commands[EDGES_WORD], count), count != 0u);
    }
    workgroupBarrier();
    if (e.x != UNRESOLVED) {
        edges[base + slot] = vec4<u32>(e.x, e.y, links[k].w, e.z);
    }
}
