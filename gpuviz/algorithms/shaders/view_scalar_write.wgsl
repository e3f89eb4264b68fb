fn ${NAME}_set4(i: u32, v: vec4<u32>) {
    let p = $OFF + i;
    $NAME[p] = v.x;
    $NAME[p + 1u] = v.y;
    $NAME[p + 2u] = v.z;
    $NAME[p + 3u] = v.w;
}
fn ${NAME}_set1(i: u32, v: u32) { $NAME[$OFF + i] = v; }
