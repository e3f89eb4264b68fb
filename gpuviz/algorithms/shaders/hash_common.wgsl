// Shared by the hash-table kernels (included, not compiled alone).
//
// Template value key_words (1 or 2): words per key. A table slot is a record
// of RECORD words: key, value (one word) or low, high, value, pad (two).
// CAPACITY (slots, a power of two) is an override of every including kernel.

const EMPTY: u32 = 0xffffffffu;      // hash_table.py EMPTY_KEY: every key word equal to it = empty slot
const NOT_FOUND: u32 = 0xffffffffu;  // hash_table.py NOT_FOUND
const KEY_WORDS: u32 = {{ key_words }}u;
const RECORD: u32 = {{ 2 if key_words == 1 else 4 }}u;
const VALUE_WORD: u32 = {{ key_words }}u;

override CAPACITY: u32;

// murmur3's 32-bit finalizer: a bijection that spreads every input bit over
// the output, so keys that are multiples of the capacity do not share a slot.
fn fmix32(x: u32) -> u32 {
    var h = x;
    h ^= h >> 16u;
    h *= 0x85ebca6bu;
    h ^= h >> 13u;
    h *= 0xc2b2ae35u;
    h ^= h >> 16u;
    return h;
}

fn rotl(x: u32, r: u32) -> u32 {
    return (x << r) | (x >> (32u - r));
}

// One block of murmur3_32's body.
fn murmur_block(h: u32, word: u32) -> u32 {
    var k = word * 0xcc9e2d51u;
    k = rotl(k, 15u) * 0x1b873593u;
    let m = rotl(h ^ k, 13u);
    return m * 5u + 0xe6546b64u;
}

// The slot a key starts probing from.
fn home_slot(key: vec2<u32>) -> u32 {
{% if key_words == 1 %}
    return fmix32(key.x) & (CAPACITY - 1u);
{% else %}
    // murmur3_32 of the 8 bytes (low word first), seed 0
    return fmix32(murmur_block(murmur_block(0u, key.x), key.y) ^ 8u) & (CAPACITY - 1u);
{% endif %}
}

fn is_empty_key(key: vec2<u32>) -> bool {
{% if key_words == 1 %}
    return key.x == EMPTY;
{% else %}
    return key.x == EMPTY && key.y == EMPTY;
{% endif %}
}

fn same_key(a: vec2<u32>, b: vec2<u32>) -> bool {
{% if key_words == 1 %}
    return a.x == b.x;
{% else %}
    return all(a == b);
{% endif %}
}

// Add p to a (low, high) pair of workgroup or storage counters with carry.
fn carry_of(old: u32, p: u32) -> u32 {
    return select(0u, 1u, old + p < old);
}
