#!/bin/sh
# Checks that every place naming the planted bugs agrees with loom-tests/planted-bugs.txt: the
# `planted_bug!("...")` uses in src/ (crew-slot's `cfg!(crew_bug = "...")` in slot/src/), the
# `crew_bug` values in both Cargo.toml check-cfg lists, and the bug/model table in
# loom-tests/README.md. Run from the repository root; no build.
set -u
list=loom-tests/planted-bugs.txt
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
grep -v '^#' "$list" | awk 'NF { print $1 " " $2 }' | sort > "$tmp/pairs"
cut -d' ' -f1 "$tmp/pairs" | sort -u > "$tmp/names"
# No name twice in the list.
if [ "$(wc -l < "$tmp/names")" -ne "$(wc -l < "$tmp/pairs")" ]; then
    echo "$list names a planted bug twice"
    exit 1
fi
# crew's src/ plants through its `planted_bug!` macro; crew-slot (slot/src/) with `cfg!` itself.
{
    grep -rhoE 'planted_bug!\("[a-z_]+"\)' src
    grep -rhoE 'cfg!\(crew_bug = "[a-z_]+"\)' slot/src
} | sed -E 's/.*"([a-z_]+)"\)/\1/' | sort -u > "$tmp/src"
for toml in Cargo.toml loom-tests/Cargo.toml; do
    grep -oE "cfg\(crew_bug, values\([^)]*\)" "$toml" | grep -oE '"[a-z_]+"' | tr -d '"' | sort -u \
        > "$tmp/$(echo "$toml" | tr '/' '_')"
done
sed -nE 's/^\| `([a-z_]+)` \| `([a-z_]+)\.rs` \|.*/\1 \2/p' loom-tests/README.md | sort > "$tmp/readme"
status=0
check() { # check WHAT FILE EXPECTED
    if ! diff -u "$3" "$2" > "$tmp/diff"; then
        echo "planted bugs: $1 disagrees with $list (- missing there, + not in the list):"
        sed -n '3,$p' "$tmp/diff"
        status=1
    fi
}
check "src/ and slot/src/ (the planted bugs' uses)" "$tmp/src" "$tmp/names"
check "Cargo.toml check-cfg" "$tmp/Cargo.toml" "$tmp/names"
check "loom-tests/Cargo.toml check-cfg" "$tmp/loom-tests_Cargo.toml" "$tmp/names"
check "loom-tests/README.md's table (bug, model)" "$tmp/readme" "$tmp/pairs"
[ "$status" -eq 0 ] && echo "planted bugs: $(wc -l < "$tmp/names") names, the same in src/, both Cargo.toml files and the README"
exit "$status"
