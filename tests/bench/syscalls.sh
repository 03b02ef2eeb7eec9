#!/usr/bin/env bash
# tests/bench/syscalls.sh: the system calls of one full snapshot, counted with
# strace -f -c, in total and per regular file of the tree. Counts are
# deterministic for the walk's own calls (openat, fstat, flistxattr, read,
# close, getdents64, newfstatat); futex, nanosleep and the like are the Go
# runtime's and grow with the slowdown strace itself causes.
#
#   tests/bench/syscalls.sh [DIFFGATE] [TREE]
#
# DIFFGATE defaults to bin/diffgate, TREE to $BENCH_DIR/small (bench.sh's
# 50,000-file tree, /tmp/diffgate-bench/small).
set -euo pipefail
bin=${1:-bin/diffgate}
tree=${2:-${BENCH_DIR:-/tmp/diffgate-bench}/small}
command -v strace >/dev/null || { echo "syscalls.sh: strace is required" >&2; exit 2; }
[ -d "$tree" ] || { echo "syscalls.sh: no tree at $tree (bench.sh generates it)" >&2; exit 2; }
files=$(find "$tree" -type f | wc -l)
out=$(mktemp) && trap 'rm -f "$out" "$out.json"' EXIT
strace -f -c -o "$out" "$bin" snapshot "$tree" -o "$out.json" >/dev/null
echo "$files files; calls per file (strace -f -c of $bin snapshot):"
# strace -c rows: % time, seconds, usecs/call, calls, [errors], syscall.
awk -v n="$files" '$1 ~ /^[0-9.]+$/ && $NF != "total" {
	printf "  %-14s %8d  %6.3f\n", $NF, $4, $4 / n; t += $4
} END { printf "  %-14s %8d  %6.3f\n", "total", t, t / n }' "$out"
