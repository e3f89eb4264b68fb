// Accessors for a packed uint32 view bound as vec4 words (element offset and
// bound range are multiples of four elements). Index i counts view rows.
@group(0) @binding($BINDING) var<storage, $ACCESS> $NAME: array<vec4<u32>>;
fn ${NAME}_get4(i: u32) -> vec4<u32> { return $NAME[($OFF + i) >> 2u]; }
fn ${NAME}_get1(i: u32) -> u32 { let p = $OFF + i; return $NAME[p >> 2u][p & 3u]; }
