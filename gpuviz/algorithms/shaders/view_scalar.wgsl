// Accessors for a packed uint32 view at any four-byte offset. Index i counts
// view rows.
@group(0) @binding($BINDING) var<storage, $ACCESS> $NAME: array<u32>;
fn ${NAME}_get4(i: u32) -> vec4<u32> {
    let p = $OFF + i;
    return vec4<u32>($NAME[p], $NAME[p + 1u], $NAME[p + 2u], $NAME[p + 3u]);
}
fn ${NAME}_get1(i: u32) -> u32 { return $NAME[$OFF + i]; }
