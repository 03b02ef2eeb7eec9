#!/usr/bin/env bash
# tests/bench/bench.sh: diffgate against the seed (snapshot.py + diff.py), on
# the same machine in the same run, page cache warm. Prints a table of median
# times, ratios against the seed and peak memory, and which targets are met.
#
#   tests/bench/bench.sh                  # or: make bench
#
# Environment:
#   BENCH_DIR       scratch directory for trees and results (/tmp/diffgate-bench);
#                   trees are reused while their marker file matches
#   BENCH_RUNS      timed runs per command (default 10; large-tree runs use half)
#   BENCH_ROUNDS    rounds the runs are split into, alternating commands (5)
#   BENCH_MAX_LOAD  if set, wait (up to 10 min) until the 1-minute load average
#                   is below it before measuring: other jobs distort timings
#   BENCH_WEB=0     skip the web app's start in headless Chromium (it needs
#                   build/web: make bench builds it, make web otherwise)
#   BENCH_FULL=0    skip the 200,000- and 1,000,000-entry trees (their generation
#                   and memory peaks) and the real tree (group real: copies of
#                   /usr/share and /usr/lib, about 125,000 entries and 5 GB)
#   BENCH_ONLY      run only these groups (space-separated): snap_small snap_large
#                   gate_small contain after_small stage_small stage_after
#                   stage_huge phases web policy html review rss gobuild proxy team
#                   real; the table
#                   shows the others as "not run" (default: all)
#   DIFFGATE        binary to measure (default bin/diffgate, built if missing)
#   BENCH_GOFLAGS   extra flags for building the in-process probes (snapprobe,
#                   histprobe, stageprobe), e.g. -overlay to measure other code
#
# Exit status: 0 when every target is met, 1 when one is not, 2 on a setup error.
set -euo pipefail

case "${DIFFGATE:-}" in "" | /*) ;; *) DIFFGATE=$PWD/$DIFFGATE ;; esac
case "${BENCH_DIR:-}" in "" | /*) ;; *) BENCH_DIR=$PWD/$BENCH_DIR ;; esac
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
REPO=$PWD
BENCH_DIR=${BENCH_DIR:-/tmp/diffgate-bench}
RUNS=${BENCH_RUNS:-10}
BIG_RUNS=$(( RUNS / 2 > 3 ? RUNS / 2 : 3 ))
BENCH_FULL=${BENCH_FULL:-1}
BENCH_WEB=${BENCH_WEB:-1}
WEB_DIR=$REPO/build/web
# want GROUP: whether BENCH_ONLY (if set) asks for GROUP.
want() { [ -z "${BENCH_ONLY:-}" ] || [[ " $BENCH_ONLY " == *" $1 "* ]]; }
want web || BENCH_WEB=0
BENCH_REAL=$BENCH_FULL
want real || BENCH_REAL=0
{ want rss || want stage_huge; } || BENCH_FULL=0
DIFFGATE=${DIFFGATE:-$REPO/bin/diffgate}
SEED=$REPO/cmd/diffgate/testdata
OUT=$BENCH_DIR/out
RES=$BENCH_DIR/results
GENTREE_VERSION=1 # bump when tests/bench/gentree changes what it writes

die() { echo "bench: $*" >&2; exit 2; }
for tool in go hyperfine python3 /usr/bin/time find xargs sha256sum; do
	command -v "$tool" >/dev/null || die "$tool is required (make test-deps installs hyperfine and time)"
done
case "$BENCH_DIR" in "$REPO"|"$REPO"/*) die "BENCH_DIR must be outside the repository" ;; esac
if [ "$BENCH_WEB" != 0 ]; then
	[ -x "${CHROMIUM:-/usr/bin/chromium}" ] || die "${CHROMIUM:-/usr/bin/chromium} is required for the web app's start (make test-deps installs chromium; BENCH_WEB=0 skips it)"
	[ -f "$WEB_DIR/diffgate.wasm" ] || die "$WEB_DIR is missing (make web builds it; BENCH_WEB=0 skips the web app's start)"
fi

mkdir -p "$BENCH_DIR/bin" "$OUT" "$RES"
rm -f "$RES"/*.json "$RES"/*.txt

if [ ! -x "$DIFFGATE" ]; then
	echo "building $DIFFGATE"
	CGO_ENABLED=0 go build -o "$DIFFGATE" ./cmd/diffgate
fi
# shellcheck disable=SC2086 # BENCH_GOFLAGS is a list of flags
go build ${BENCH_GOFLAGS:-} -o "$BENCH_DIR/bin/snapprobe" ./tests/bench/snapprobe
# shellcheck disable=SC2086
go build ${BENCH_GOFLAGS:-} -o "$BENCH_DIR/bin/histprobe" ./tests/bench/histprobe
# shellcheck disable=SC2086
go build ${BENCH_GOFLAGS:-} -o "$BENCH_DIR/bin/stageprobe" ./tests/bench/stageprobe

# tree KIND: generate $BENCH_DIR/KIND once (a marker file outside the tree
# records what was generated).
tree() {
	local kind=$1 marker="$BENCH_DIR/$1.generated"
	if [ "$(cat "$marker" 2>/dev/null)" != "gentree v$GENTREE_VERSION $kind" ]; then
		echo "generating the $kind tree in $BENCH_DIR/$kind"
		rm -rf "${BENCH_DIR:?}/$kind" "$marker"
		go run ./tests/bench/gentree -kind "$kind" "$BENCH_DIR/$kind"
		echo "gentree v$GENTREE_VERSION $kind" >"$marker"
	fi
}
# real_tree: $BENCH_DIR/real, a copy of /usr/share and /usr/lib as they are
# on this machine (the first REAL_ENTRIES entries in path order), made once
# and kept while its marker file (outside the tree) matches: real files of
# every size, symlinks and permissions, unlike gentree's.
REAL_ENTRIES=125000
real_tree() {
	local dir=$BENCH_DIR/real marker=$BENCH_DIR/real.generated
	if [ "$(cat "$marker" 2>/dev/null)" != "real v1 $REAL_ENTRIES" ]; then
		echo "copying /usr/share and /usr/lib to $dir (at most $REAL_ENTRIES entries)"
		rm -rf "$dir" "$marker"
		mkdir -p "$dir"
		# Sorted, a directory comes before everything below it: the first
		# entries of the list are a tree.
		(cd /usr && find share lib -print0 | LC_ALL=C sort -z | head -z -n "$REAL_ENTRIES") >"$BENCH_DIR/real.list"
		tar -C /usr --null --no-recursion -T "$BENCH_DIR/real.list" -cf - | tar -C "$dir" -xpf - ||
			die "copying /usr to $dir failed"
		echo "real v1 $REAL_ENTRIES" >"$marker"
	fi
}

tree small
want snap_large && tree large
[ "$BENCH_REAL" = 0 ] || real_tree
if [ "$BENCH_FULL" != 0 ] && want rss; then tree many; fi
[ "$BENCH_FULL" = 0 ] || tree huge

printf '#!/bin/sh\nexit 0\n' >"$BENCH_DIR/noop.sh"
chmod +x "$BENCH_DIR/noop.sh"

if [ -n "${BENCH_MAX_LOAD:-}" ]; then
	for _ in $(seq 60); do
		load=$(cut -d' ' -f1 /proc/loadavg)
		python3 -c "import sys; sys.exit(0 if $load < $BENCH_MAX_LOAD else 1)" && break
		echo "load $load >= $BENCH_MAX_LOAD: waiting"
		sleep 10
	done
fi
LOAD_BEFORE=$(cut -d' ' -f1-3 /proc/loadavg)

S=$BENCH_DIR/small L=$BENCH_DIR/large
DB=$BENCH_DIR/history.db
rm -f "$DB" "$DB"-wal "$DB"-shm

# hf NAME RUNS [-n NAME COMMAND]...: time the commands with hyperfine in
# BENCH_ROUNDS rounds that alternate between them (a burst of load from
# elsewhere then hits every command alike rather than whichever ran at that
# moment), warm cache (--warmup 1 in the first round), and merge the rounds
# into $RES/NAME.json.
ROUNDS=${BENCH_ROUNDS:-5}
hf() {
	local name=$1 runs=$2 r warmup=1
	shift 2
	want "$name" || want "${name%%_*}" || want "${name%_*}" || return 0
	local per=$(((runs + ROUNDS - 1) / ROUNDS))
	for r in $(seq "$ROUNDS"); do
		hyperfine --warmup "$warmup" --runs "$per" --style none --export-json "$RES/$name.round$r.json" "$@"
		warmup=0
	done
	python3 "$REPO/tests/bench/report.py" --merge "$RES/$name.json" "$RES/$name".round*.json
}

want snap_small && echo
want snap_small && echo "== full snapshot, small tree: 50,000 files of 0-16 KiB (warm cache)"
hf snap_small "$RUNS" \
	-n diffgate "$DIFFGATE snapshot $S -o $OUT/small.json" \
	-n seed "python3 $SEED/snapshot.py $S $OUT/small.seed.json" \
	-n sha256sum "cd $S && find . -type f -print0 | xargs -0 -P2 sha256sum >/dev/null" \
	-n find-stat "cd $S && find . -printf '%s %i %T@ %C@\n' >/dev/null"

want snap_large && echo
want snap_large && echo "== full snapshot, large tree: 4 files of 512 MiB (warm cache)"
hf snap_large "$BIG_RUNS" \
	-n diffgate "$DIFFGATE snapshot $L -o $OUT/large.json" \
	-n seed "python3 $SEED/snapshot.py $L $OUT/large.seed.json" \
	-n sha256sum "cd $L && find . -type f -print0 | xargs -0 -P2 -n1 sha256sum >/dev/null"

# The real tree: a repeated gated no-op run with history against one
# stat-only walk of it, and the first run (a fresh history each time: no
# hash cache, every file hashed, the text store filled) against hashing every
# file with sha256sum on both cores.
R=$BENCH_DIR/real
RDB=$BENCH_DIR/real.db FDB=$BENCH_DIR/real-first.db
if [ "$BENCH_REAL" != 0 ]; then
	echo
	echo "== real tree ($(find "$R" | tail -n +2 | wc -l) entries of /usr/share and /usr/lib): repeated gated no-op run, history warm, vs a stat-only walk (warm cache)"
	rm -f "$RDB" "$RDB"-wal "$RDB"-shm
	hf real_gate "$RUNS" \
		-n diffgate-history "$DIFFGATE run --workspace $R --db $RDB -- $BENCH_DIR/noop.sh" \
		-n find-stat "cd $R && find . -printf '%s %i %T@ %C@\n' >/dev/null"
	echo
	echo "== real tree: first gated no-op run (fresh history: no hash cache), vs find | xargs -P2 sha256sum (warm cache)"
	hf real_first "$BIG_RUNS" --prepare "rm -f $FDB $FDB-wal $FDB-shm" \
		-n diffgate-first "$DIFFGATE run --workspace $R --db $FDB -- $BENCH_DIR/noop.sh" \
		-n sha256sum "cd $R && find . -type f -print0 | xargs -0 -P2 sha256sum >/dev/null"
	rm -f "$RDB" "$RDB"-wal "$RDB"-shm "$FDB" "$FDB"-wal "$FDB"-shm
fi

want gate_small && echo
want gate_small && echo "== gated no-op run, small tree (warm cache)"
# The first run with history (a warmup) fills the hash cache; every later
# one uses the cache the run before it left.
hf gate_small "$RUNS" \
	-n diffgate-no-history "$DIFFGATE run --workspace $S --no-history -- $BENCH_DIR/noop.sh" \
	-n diffgate-history "$DIFFGATE run --workspace $S --db $DB -- $BENCH_DIR/noop.sh" \
	-n seed "python3 $SEED/snapshot.py $S $OUT/before.seed.json && (cd $S && $BENCH_DIR/noop.sh) && python3 $SEED/snapshot.py $S $OUT/after.seed.json && python3 $SEED/diff.py $OUT/before.seed.json $OUT/after.seed.json ''"

# Containment's own cost: a no-op run on an empty workspace (namespaces,
# cgroup, Landlock rules, seccomp filters, the watcher), and a script that
# opens 5,000 files (each open goes to the supervisor first).
E=$BENCH_DIR/empty
rm -rf "$E" && mkdir -p "$E"
printf '#!/bin/sh\nfind %s -type f | head -5000 | xargs cat >/dev/null\n' "$S" >"$BENCH_DIR/opens.sh"
chmod +x "$BENCH_DIR/opens.sh"
want contain && echo
want contain && echo "== containment: no-op run on an empty workspace, and 5,000 opens (--no-history, warm cache)"
# What containment adds to the small tree's repeated run: three times the
# runs, in rounds of two each (0.2 s a run; a 10-run median moved the ratio
# between 0.99 and 1.11 from one full run to the next).
ROUNDS=$((RUNS * 3 / 2)) hf contain_small $((RUNS * 3)) \
	-n contained "$DIFFGATE run --workspace $S --db $DB -- $BENCH_DIR/noop.sh" \
	-n uncontained "$DIFFGATE run --workspace $S --db $DB --contain=off -- $BENCH_DIR/noop.sh"
hf contain_empty "$RUNS" \
	-n contained "$DIFFGATE run --workspace $E --no-history -- $BENCH_DIR/noop.sh" \
	-n uncontained "$DIFFGATE run --workspace $E --no-history --contain=off -- $BENCH_DIR/noop.sh"
hf contain_opens "$RUNS" \
	-n contained "$DIFFGATE run --workspace $E --no-history -- $BENCH_DIR/opens.sh" \
	-n uncontained "$DIFFGATE run --workspace $E --no-history --contain=off -- $BENCH_DIR/opens.sh"

# A contained go build of a small module on its second run (preset:go-build:
# the profile's private build cache, warm) against the same build
# uncontained with the same build cache. bin/ is removed before each run, so
# each one links. The caches live under $BENCH_DIR/gocache and are kept: only
# the first make bench compiles the standard library into them.
G=$BENCH_DIR/gomod
GO_XDG=$BENCH_DIR/gocache
if want gobuild; then
	echo
	echo "== contained go build of a small module (preset:go-build), second run, against the same build uncontained (same warm build cache)"
	rm -rf "$G" && mkdir -p "$G"
	printf 'module example.com/hello\n\ngo 1.21\n' >"$G/go.mod"
	printf 'package main\n\nimport (\n\t"fmt"\n\t"os"\n)\n\nfunc main() { fmt.Fprintln(os.Stdout, "hello") }\n' >"$G/main.go"
	printf '#!/bin/sh\nexec %s build -o bin/ ./...\n' "$(command -v go)" >"$BENCH_DIR/gobuild.sh"
	chmod +x "$BENCH_DIR/gobuild.sh"
	# The first run fills the private cache; its report names it.
	env XDG_CACHE_HOME="$GO_XDG" GOTOOLCHAIN=local "$DIFFGATE" run --workspace "$G" --no-history --allow preset:go-build \
		--report "$OUT/gobuild.json" -- "$BENCH_DIR/gobuild.sh" >/dev/null 2>"$OUT/gobuild.err" ||
		die "the contained go build failed: $(tail -3 "$OUT/gobuild.err")"
	GO_CACHE=$(python3 -c 'import json,sys
for g in json.load(open(sys.argv[1]))["containment"]["grants"]:
    if g["kind"] == "cache" and g["target"].startswith("GOCACHE="): print(g["target"][8:])' "$OUT/gobuild.json")
	[ -d "$GO_CACHE" ] || die "the contained go build's report names no GOCACHE"
	hf gobuild "$RUNS" --prepare "rm -rf $G/bin" \
		-n contained "env XDG_CACHE_HOME=$GO_XDG GOTOOLCHAIN=local $DIFFGATE run --workspace $G --no-history --allow preset:go-build -- $BENCH_DIR/gobuild.sh" \
		-n uncontained "env XDG_CACHE_HOME=$GO_XDG GOTOOLCHAIN=local GOCACHE=$GO_CACHE GOTELEMETRY=off $DIFFGATE run --workspace $G --no-history --contain=off --allow preset:go-build -- $BENCH_DIR/gobuild.sh"
fi

# The proxy of --net-allow: 200 requests of 100 KB each on loopback through
# it against the same direct, in turn (the median of the iterations'
# ratios): HTTPS through a CONNECT tunnel from a Go client (the target: the
# registries are HTTPS), plain HTTP from a Go client and from curl.
if want proxy; then
	echo
	echo "== the proxy of --net-allow: 200 requests of 100 KB on loopback, through it vs direct (BenchmarkProxy{TLS,,Curl}200x100KB)"
	go test -run XXX -bench 'BenchmarkProxy(TLS|Curl)?200x100KB$' -benchtime 15x ./core/netproxy |
		awk '/^BenchmarkProxy/ {r = d = p = ""; for (i = 2; i <= NF; i++) {if ($i == "x-direct") r = $(i - 1); if ($i == "direct-ms") d = $(i - 1); if ($i == "proxy-ms") p = $(i - 1)}; sub(/-[0-9]+$/, "", $1); print $1, r, d, p}' |
		tee "$RES/proxy.txt"
fi

if want after_small; then
	echo
	echo "== after-snapshot with 10 files rewritten, small tree (in-process, warm cache)"
	"$BENCH_DIR/bin/snapprobe" -mode after -touch 10 -runs "$RUNS" -json "$RES/after_small.json" "$S"
fi

# Staged runs keep their stages under $BENCH_DIR/cache (XDG_CACHE_HOME for the
# CLI only: go's own build cache stays where it is), emptied before each timed
# run (a copy stage, where no overlay works, holds a whole copy of the tree).
STAGES=$BENCH_DIR/cache/diffgate/stages
SDB=$BENCH_DIR/stage.db
staged() { # DIR: a staged no-op run as the CLI performs it
	echo "XDG_CACHE_HOME=$BENCH_DIR/cache $DIFFGATE run --stage --workspace $1 --db $SDB -- true"
}
rm -rf "$BENCH_DIR/cache" "$SDB" "$SDB"-wal "$SDB"-shm

if want stage_small; then
	echo
	echo "== staged no-op run, small tree, history warm (warm cache)"
	sh -c "$(staged "$S")" >/dev/null 2>"$OUT/stage.err" || die "staged run on $S failed: $(tail -1 "$OUT/stage.err")"
fi
# The seed's gate in the same rounds: the row's baseline.
hf stage_small "$RUNS" --prepare "rm -rf $STAGES" -n diffgate-stage "$(staged "$S")" \
	-n seed "python3 $SEED/snapshot.py $S $OUT/before.seed.json && (cd $S && $BENCH_DIR/noop.sh) && python3 $SEED/snapshot.py $S $OUT/after.seed.json && python3 $SEED/diff.py $OUT/before.seed.json $OUT/after.seed.json ''"

if want stage_after; then
	echo
	echo "== after-phase of a staged run that changed 10 files, small tree (in-process: the gate's StageCost.Read)"
	"$BENCH_DIR/bin/stageprobe" -touch 10 -runs "$RUNS" -base "$BENCH_DIR/cache/stageprobe" -json "$RES/stage_after.json" "$S"
	# The row's baseline, in the same invocation.
	hf stage_after_find "$RUNS" -n find-stat "cd $S && find . -printf '%s %i %T@ %C@\n' >/dev/null"
fi

if [ "$BENCH_FULL" != 0 ] && want stage_huge; then
	echo
	echo "== staged runs, 1M-entry tree, history warm (warm cache): a no-op, and a script that changes 10 files; a stat-only walk beside them"
	sh -c "$(staged "$BENCH_DIR/huge")" >/dev/null 2>"$OUT/stage.err" || die "staged run on the huge tree failed: $(tail -1 "$OUT/stage.err")"
	# 10 files of the tree (find stops once head has them: its SIGPIPE is no
	# failure), each appended to.
	{
		echo '#!/bin/sh'
		(cd "$BENCH_DIR/huge" && set +o pipefail && find . -type f -name '*.txt' | head -1000 | awk 'NR % 100 == 1' |
			sed 's/.*/echo changed >>"&"/') # gentree's names need no quoting
	} >"$BENCH_DIR/touch10.sh"
	chmod +x "$BENCH_DIR/touch10.sh"
	[ "$(grep -c '^echo' "$BENCH_DIR/touch10.sh")" = 10 ] || die "the huge tree has fewer than 10 text files among its first 1,000"
	hf stage_huge "$BIG_RUNS" --prepare "rm -rf $STAGES" -n diffgate-stage "$(staged "$BENCH_DIR/huge")" \
		-n diffgate-stage-touch10 "XDG_CACHE_HOME=$BENCH_DIR/cache $DIFFGATE run --stage --workspace $BENCH_DIR/huge --db $SDB --allow 'changed:**' -- $BENCH_DIR/touch10.sh" \
		-n find-stat "cd $BENCH_DIR/huge && find . -printf '%s %i %T@ %C@\n' >/dev/null"
fi
rm -rf "$BENCH_DIR/cache" "$SDB" "$SDB"-wal "$SDB"-shm

# The team store: the same gated no-op run recorded to a PostgreSQL team
# store (a server of its own under $BENCH_DIR/pg, unix socket only, as uid
# 65534 when root) and to a local history, paired in the same rounds. The
# first run of each (a warmup) fills its hash cache.
TEAM=none
if want team; then
	PGBIN=$(find /usr/lib/postgresql -maxdepth 2 -name bin -type d 2>/dev/null | sort -V | tail -1)
	[ -x "$PGBIN/pg_ctl" ] || die "PostgreSQL is required for the team store row (make test-deps installs postgresql; BENCH_ONLY without team skips it)"
	PGD=$BENCH_DIR/pg
	rm -rf "$PGD" "$BENCH_DIR/team-local.db"* "$BENCH_DIR/team-config"
	mkdir -p "$PGD/sock"
	asuser=()
	if [ "$(id -u)" = 0 ]; then
		chown -R 65534:65534 "$PGD"
		asuser=(setpriv --reuid=65534 --regid=65534 --clear-groups)
	fi
	"${asuser[@]}" "$PGBIN/initdb" -D "$PGD/data" -U postgres --auth=trust -E UTF8 --locale=C >"$PGD/initdb.log" 2>&1 ||
		die "initdb failed: $(tail -3 "$PGD/initdb.log")"
	"${asuser[@]}" "$PGBIN/pg_ctl" -D "$PGD/data" -l "$PGD/log" -w -t 60 -o "-c listen_addresses='' -k $PGD/sock" start >/dev/null ||
		die "the PostgreSQL server did not start: $(tail -3 "$PGD/log")"
	trap '"${asuser[@]}" "$PGBIN/pg_ctl" -D "$PGD/data" -m fast -w stop >/dev/null 2>&1 || true' EXIT
	"${asuser[@]}" "$PGBIN/createdb" -h "$PGD/sock" -U postgres diffgate
	TEAM="postgres://postgres@/diffgate?host=$PGD/sock"
	echo
	echo "== gated no-op run, small tree, recorded to a team store (PostgreSQL, unix socket) vs locally (warm cache)"
fi
hf team "$RUNS" \
	-n diffgate-local "$DIFFGATE run --workspace $S --db $BENCH_DIR/team-local.db -- $BENCH_DIR/noop.sh" \
	-n diffgate-team "XDG_CONFIG_HOME=$BENCH_DIR/team-config $DIFFGATE run --workspace $S --db '$TEAM' -- $BENCH_DIR/noop.sh"

if want phases; then
	echo
	echo "== where a gated no-op run's time goes, small tree (in-process, ms; history cache from the runs above)"
	"$BENCH_DIR/bin/histprobe" -db "$DB" -runs 6 "$S" "$BENCH_DIR/noop.sh" | tee "$RES/phases.txt"
	"$BENCH_DIR/bin/histprobe" -no-history -runs 3 "$S" "$BENCH_DIR/noop.sh" | sed 's/^/no history: /' | tee -a "$RES/phases.txt"
fi

if [ "$BENCH_WEB" != 0 ]; then
	echo
	echo "== web app: navigation to ready in headless Chromium, empty cache, served gzipped from 127.0.0.1 ($RUNS loads, tests/web TestStartTime)"
	DIFFGATE_WEB_DIR=$WEB_DIR DIFFGATE_WEB_BENCH=$RES/web_start.json DIFFGATE_WEB_RUNS=$RUNS \
		go test -count=1 -run '^TestStartTime$' -v ./tests/web >"$OUT/web_start.log" 2>&1 ||
		die "the web app's start failed: $(grep -E -m3 'start_test|FAIL|panic' "$OUT/web_start.log")"
	grep -E '^ +start_test.go:[0-9]+: run ' "$OUT/web_start.log" | sed 's/^ *start_test.go:[0-9]*: /  /'
fi

if want policy; then
	echo
	echo "== policy: parse 100,000 glob entries and decide 2,000 changes (in-process, BenchmarkLargeAllowlist)"
	go test -run XXX -bench 'BenchmarkLargeAllowlist$' -benchtime 5x ./core/policy |
		awk '/^BenchmarkLargeAllowlist/ {printf "%.6f\n", $3 / 1e9}' | tee "$RES/policy.txt"
fi

if want html; then
	echo
	echo "== HTML report of a 5,000-change run: load in headless Chromium (median of 5 fresh tabs, BenchmarkHTMLLoad)"
	DIFFGATE_BENCH_HTML=1 go test -run XXX -bench 'BenchmarkHTMLLoad$' -benchtime 5x ./core/report |
		awk '/^BenchmarkHTMLLoad/ {for (i = 2; i <= NF; i++) if ($i == "load-ms") printf "%.6f\n", $(i - 1) / 1000}' | tee "$RES/html_load.txt"
fi

if want review; then
	echo
	echo "== the app's review of 5,000-change runs (in-process, headless fyne/test, BenchmarkReviewScale)"
	# Three gated runs through the app's Run tab, then opening, reopening from
	# the history, re-evaluating and reviewing; metrics as "NAME VALUE" lines.
	go test -run XXX -bench 'BenchmarkReviewScale$' -benchtime 1x ./app/ui >"$RES/review.out" 2>&1 ||
		die "BenchmarkReviewScale failed: $(tail -5 "$RES/review.out")"
	grep '^BenchmarkReviewScale' "$RES/review.out"
	awk '/^BenchmarkReviewScale/ { for (i = 5; i < NF; i += 2) print $(i + 1), $i }' "$RES/review.out" >"$RES/review.txt"
	[ -s "$RES/review.txt" ] || die "BenchmarkReviewScale reported nothing: $(tail -5 "$RES/review.out")"
fi

if want rss; then
	echo
	echo "== peak memory (max RSS)"
	rss() { # NAME DIR
		/usr/bin/time -v "$DIFFGATE" snapshot "$2" -o "$OUT/$1.rss.json" 2>&1 >/dev/null |
			awk -v n="$1" '/Maximum resident set size/ {print n, $NF}' >>"$RES/rss.txt"
	}
	rss small "$S"
	[ "$BENCH_FULL" = 0 ] || rss many "$BENCH_DIR/many"
	entries() { python3 -c "import json,sys; print(len(json.load(open(sys.argv[1]))['entries']))" "$1"; }
	echo "small $(entries "$OUT/small.rss.json")" >"$RES/entries.txt"
	[ "$BENCH_FULL" = 0 ] || echo "many $(entries "$OUT/many.rss.json")" >>"$RES/entries.txt"

	# Peak memory of whole gated runs with history, as the CLI performs them. The
	# first run of each fills the workspace's hash cache (a fresh database); the
	# measured ones are repeated runs, as in daily use.
	gate_rss() { # NAME DIR [run flags] -- SCRIPT
		local name=$1 dir=$2
		shift 2
		/usr/bin/time -v "$DIFFGATE" run --workspace "$dir" --db "$BENCH_DIR/mem.db" "$@" 2>"$OUT/$name.time" >/dev/null || {
			# exit 1 is a verdict (the 5,000 changes are not allowed); anything else is not
			grep -q "Exit status: 1$" "$OUT/$name.time" || die "gated run $name failed: $(grep -v '^	' "$OUT/$name.time" | head -3)"
		}
		awk -v n="$name" '/Maximum resident set size/ {print n, $NF}' "$OUT/$name.time" >>"$RES/rss.txt"
	}
	if [ "$BENCH_FULL" != 0 ]; then
		rm -f "$BENCH_DIR/mem.db" "$BENCH_DIR/mem.db"-wal "$BENCH_DIR/mem.db"-shm
		M=$BENCH_DIR/many H=$BENCH_DIR/huge
		# 5,000 new files (first run) or 5,000 rewritten ones (later runs) under out/.
		printf '#!/bin/bash
mkdir -p out
for ((i = 0; i < 5000; i++)); do echo "$$ $i" >out/f$i; done
' >"$BENCH_DIR/changes.sh"
		chmod +x "$BENCH_DIR/changes.sh"
		rm -rf "$M/out"
		gate_rss gate_many_warmup "$M" -- "$BENCH_DIR/noop.sh"
		gate_rss gate_many "$M" -- "$BENCH_DIR/noop.sh"
		gate_rss gate_many_changes_warmup "$M" --report "$OUT/changes.json" -- "$BENCH_DIR/changes.sh"
		gate_rss gate_many_changes "$M" --report "$OUT/changes.json" -- "$BENCH_DIR/changes.sh"
		changes=$(python3 -c "import json,sys; print(len(json.load(open(sys.argv[1]))['changes']))" "$OUT/changes.json")
		rm -rf "$M/out"
		[ "$changes" = 5000 ] || die "the 5,000-change run reported $changes changes"
		gate_rss gate_huge_warmup "$H" -- "$BENCH_DIR/noop.sh"
		gate_rss gate_huge "$H" -- "$BENCH_DIR/noop.sh"
		echo "huge $(find "$H" | tail -n +2 | wc -l)" >>"$RES/entries.txt"
		rm -f "$BENCH_DIR/mem.db" "$BENCH_DIR/mem.db"-wal "$BENCH_DIR/mem.db"-shm
	fi
	cat "$RES/rss.txt"
fi

LOAD_AFTER=$(cut -d' ' -f1-3 /proc/loadavg)
echo
python3 "$REPO/tests/bench/report.py" "$RES" "$LOAD_BEFORE" "$LOAD_AFTER"
