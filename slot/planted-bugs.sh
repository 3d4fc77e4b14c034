#!/bin/sh
# Runs crew-slot's tests against each planted bug (`--cfg crew_slot_bug="<name>"`, listed in
# Cargo.toml's check-cfg) and fails if any bug passes them. Run from the repository root; the
# builds go to $SLOT_BUG_TARGET_DIR (default target/slot-bugs).
set -u
status=0
for bug in take_keeps swap_forgets; do
    # A build failure must not pass for a caught bug.
    if ! RUSTFLAGS="--cfg crew_slot_bug=\"$bug\"" CARGO_TARGET_DIR="${SLOT_BUG_TARGET_DIR:-target/slot-bugs}" \
        cargo test -q -p crew-slot --no-run; then
        echo "planted bug $bug: the build failed"
        status=1
        continue
    fi
    if RUSTFLAGS="--cfg crew_slot_bug=\"$bug\"" CARGO_TARGET_DIR="${SLOT_BUG_TARGET_DIR:-target/slot-bugs}" \
        cargo test -q -p crew-slot --tests >/dev/null 2>&1; then
        echo "MISSED: planted bug $bug passes crew-slot's tests"
        status=1
    else
        echo "caught: planted bug $bug fails crew-slot's tests"
    fi
done
exit $status
