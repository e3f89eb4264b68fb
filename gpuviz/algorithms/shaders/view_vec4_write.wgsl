fn ${NAME}_set4(i: u32, v: vec4<u32>) { $NAME[($OFF + i) >> 2u] = v; }
fn ${NAME}_set1(i: u32, v: u32) { let p = $OFF + i; $NAME[p >> 2u][p & 3u] = v; }
