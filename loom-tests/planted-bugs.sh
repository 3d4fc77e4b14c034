#!/bin/sh
# Runs each loom model against its planted bug (the list: loom-tests/planted-bugs.txt; see
# README.md) and fails if any model passes. Run from the repository root. A loom deadlock aborts
# the test process: that counts as caught. Each bug builds in its own target directory,
# $LOOM_BUG_TARGET_BASE-<bug> (default target/loom-bug-<bug>), so a rerun rebuilds only what
# changed.
set -u
caught=0
missed=""
pairs=$(grep -v '^#' loom-tests/planted-bugs.txt | awk 'NF { print $1 ":" $2 }')
for pair in $pairs; do
    bug=${pair%%:*}
    model=${pair#*:}
    flags="--cfg loom --cfg crew_bug=\"$bug\""
    dir="${LOOM_BUG_TARGET_BASE:-target/loom-bug}-$bug"
    # A build failure must not pass for a caught bug.
    if ! RUSTFLAGS="$flags" CARGO_TARGET_DIR="$dir" \
        cargo test -q --release -p crew-loom-tests --test "$model" --no-run; then
        echo "planted bug $bug: tests/$model.rs does not build"
        exit 2
    fi
    if RUSTFLAGS="$flags" CARGO_TARGET_DIR="$dir" \
        cargo test -q --release -p crew-loom-tests --test "$model" >/dev/null 2>&1; then
        echo "MISSED: planted bug $bug passed tests/$model.rs"
        missed="$missed $bug"
    else
        echo "caught: planted bug $bug fails tests/$model.rs"
        caught=$((caught + 1))
    fi
done
if [ -n "$missed" ]; then
    echo "planted bugs not caught:$missed"
    exit 1
fi
echo "all $caught planted bugs caught"
