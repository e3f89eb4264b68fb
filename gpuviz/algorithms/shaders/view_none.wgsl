// A role this kernel variant does not use: reads give zero, writes vanish.
fn ${NAME}_get4(i: u32) -> vec4<u32> { return vec4<u32>(0u); }
fn ${NAME}_get1(i: u32) -> u32 { return 0u; }
fn ${NAME}_set4(i: u32, v: vec4<u32>) { }
fn ${NAME}_set1(i: u32, v: u32) { }
