// Element type of a reduction: $TYPE.
alias T = $TYPE;
fn MAXV() -> T { return $MAXV; }
fn MINV() -> T { return $MINV; }
fn is_valid(x: T) -> bool { return $VALID; }
