# tests/shlib.sh — what the shell tests (test_cli.sh, test_systems.sh, test_mpi.sh) share:
# a scratch directory with its own database, cache and home, and the helpers that print one
# "ok NAME" / "FAIL NAME: why" line per check (json, csvq: SQL over --json and --csv output),
# and a tiny Fashion-MNIST-shaped data set (tiny_fmnist DIR). Sourced with $BUILD set;
# sets DLPERF and T.
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
# csvq CSV JSON EXPR: EXPR over the CSV as table c (its header row the column names; read
# by sqlite3's RFC 4180 reader) and the JSON file as j; a row with another number of fields
# than the header prints what sqlite3 said instead, so no comparison with it holds
csvq() {
    csvq_r=$(sqlite3 :memory: -cmd ".import --csv $1 c" "SELECT $3 FROM (SELECT readfile('$2') AS j)" 2>"$T/csvq.err")
    if [ -s "$T/csvq.err" ]; then echo "csv: $(head -c 300 "$T/csvq.err")"; return 1; fi
    echo "$csvq_r"
}

# A tiny Fashion-MNIST-shaped data set in IDX (512 training, 256 test images of 28x28, plain,
# not gzipped): image i has a bright band of rows at a place given by its label i mod 10,
# over a faint texture, so one epoch already learns something.
be32() { # N as 4 big-endian bytes
    printf "\\$(printf %03o $(($1 >> 24 & 255)))\\$(printf %03o $(($1 >> 16 & 255)))\\$(printf %03o $(($1 >> 8 & 255)))\\$(printf %03o $(($1 & 255)))"
}
idx_images() { # N FILE
    { printf '\000\000\010\003'; be32 "$1"; be32 28; be32 28
      LC_ALL=C awk -v n="$1" 'BEGIN { for (i = 0; i < n; i++) for (r = 0; r < 28; r++) for (k = 0; k < 28; k++)
          printf "%c", (int(r / 2) == i % 10 + 2) ? 120 : 1 + (i * 7 + r * 13 + k * 17) % 40 }'; } >"$2"
}
idx_labels() { # N FILE
    { printf '\000\000\010\001'; be32 "$1"
      i=0
      while [ $((i + 10)) -le "$1" ]; do printf '\000\001\002\003\004\005\006\007\010\011'; i=$((i + 10)); done
      printf '\000\001\002\003\004\005\006\007\010\011' | head -c $(($1 - i)); } >"$2"
}
tiny_fmnist() { # DIR: the tiny data set's four files in DIR; 0 if they came out right
    mkdir -p "$1"
    idx_images 512 "$1/train-images-idx3-ubyte" && idx_labels 512 "$1/train-labels-idx1-ubyte" &&
        idx_images 256 "$1/t10k-images-idx3-ubyte" && idx_labels 256 "$1/t10k-labels-idx1-ubyte" &&
        [ "$(wc -c <"$1/train-images-idx3-ubyte")" -eq $((16 + 512 * 784)) ] &&
        [ "$(wc -c <"$1/t10k-labels-idx1-ubyte")" -eq 264 ]
}
