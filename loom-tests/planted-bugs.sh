#!/bin/sh
# Runs each loom model against its planted bug (the list: loom-tests/planted-bugs.txt; see
# README.md) and fails if any model passes. Run from the repository root. A loom deadlock aborts
# the test process: that counts as caught.
#
# All bugs build in one target directory, $LOOM_BUG_TARGET (default target/loom-bug): RUSTFLAGS
# (`--cfg loom`) is the same for every bug, and the bug's `--cfg crew_bug` goes only to the two
# crates that read it, crew and crew-slot, through nightly's per-package profile rustflags
# (-Zprofile-rustflags). So loom and the other dependencies build once, and each bug rebuilds
# only crew, crew-slot and its model.
set -u
caught=0
missed=""
dir="${LOOM_BUG_TARGET:-target/loom-bug}"
pairs=$(grep -v '^#' loom-tests/planted-bugs.txt | awk 'NF { print $1 ":" $2 }')
for pair in $pairs; do
    bug=${pair%%:*}
    model=${pair#*:}
    flags="[\"--cfg\", \"crew_bug=\\\"$bug\\\"\"]"
    run() {
        RUSTFLAGS="--cfg loom" CARGO_TARGET_DIR="$dir" cargo +nightly -Zprofile-rustflags \
            --config "profile.release.package.crew.rustflags=$flags" \
            --config "profile.release.package.crew-slot.rustflags=$flags" \
            test -q --release -p crew-loom-tests --test "$model" "$@"
    }
    # A build failure must not pass for a caught bug.
    if ! run --no-run; then
        echo "planted bug $bug: tests/$model.rs does not build"
        exit 2
    fi
    if run >/dev/null 2>&1; then
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
