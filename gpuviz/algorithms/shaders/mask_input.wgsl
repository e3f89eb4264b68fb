// Bounded vec4 read of mask input $K (zero past the last row).
fn load_in$K(e: u32) -> vec4<u32> {
    if (e + 3u < M.n) { return in${K}_get4(e); }
    var o = vec4<u32>(0u);
    for (var c = 0u; c < 4u; c++) {
        if (e + c < M.n) { o[c] = in${K}_get1(e + c); }
    }
    return o;
}
