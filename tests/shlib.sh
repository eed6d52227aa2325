# tests/shlib.sh — what the shell tests (test_cli.sh, test_systems.sh, test_mpi.sh) share:
# a scratch directory with its own database, cache and home, and the helpers that print one
# "ok NAME" / "FAIL NAME: why" line per check. Sourced with $BUILD set; sets DLPERF and T.
DLPERF="$(pwd)/$BUILD/dlperf"
T=$(mktemp -d /tmp/dlperf-test-XXXXXX)
trap 'rm -rf "$T"' EXIT
export DLPERF_DB="$T/test.db" XDG_CACHE_HOME="$T/cache" XDG_DATA_HOME="$T/data" HOME="$T/home"
mkdir -p "$HOME"

ok() { echo "ok $1"; }
fail() { echo "FAIL $1: $2"; }

# run NAME EXPECTED_RC CMD...: runs CMD, keeps stdout in $T/out and stderr in $T/err.
run() {
    name=$1 want=$2
    shift 2
    "$@" >"$T/out" 2>"$T/err"
    got=$?
    if [ "$got" -ne "$want" ]; then
        fail "$name" "exit $got, expected $want; stderr: $(tail -c 400 "$T/err")"
        return 1
    fi
    return 0
}
# expect NAME FILE PATTERN: grep -q PATTERN in FILE
expect() {
    if grep -q -- "$3" "$2"; then ok "$1"; else fail "$1" "'$3' not in $(basename "$2"): $(head -c 300 "$2")"; fi
}
# one_line NAME: the error is exactly one line
one_line() {
    n=$(wc -l <"$T/err")
    if [ "$n" -eq 1 ]; then ok "$1 (one line)"; else fail "$1 (one line)" "$n lines: $(cat "$T/err")"; fi
}
sql() { sqlite3 "$DLPERF_DB" "$1"; }
json() { sqlite3 :memory: "SELECT $1 FROM (SELECT readfile('$T/out') AS j)"; }
