#!/usr/bin/env bash
# tests/bin/cu-memory-plan-test.sh: end-to-end checks of bin/cu-memory-plan on the recorded
# training-step trace tests/data/synthetic-nnet3.trace (made by tools/make-synthetic-trace.py).
# Run by `make test`; by hand: BUILD=build/<variant> bash tests/bin/cu-memory-plan-test.sh
source "$(dirname "$0")/tool-test-lib.sh"
TRACE=$(cd "$(dirname "$0")/../data" && pwd)/synthetic-nnet3.trace

# The trace's allocations that get a buffer: m and p records with a non-zero pointer id.
num_allocs=$(awk '($1 == "m" || $1 == "p") && $NF != 0' "$TRACE" | wc -l)

run cu-memory-plan "$TRACE"
expect_rc "plans the synthetic nnet3 trace" 0
cp "$TMP/out" "$TMP/text"
if grep -qx "buffers: $num_allocs" "$TMP/text"; then pass "one buffer per allocation ($num_allocs)"; else
  fail "buffers line: $(head -n 1 "$TMP/text"), expected $num_allocs"
fi
pattern='buffers: [0-9]+
peak: [0-9]+ bytes \([0-9]+\.[0-9] MiB\)
lower bound: [0-9]+ bytes \([0-9]+\.[0-9] MiB\)
ratio \(peak / lower bound\): [0-9]+\.[0-9]{4}
planning time: [0-9]+\.[0-9]{3} ms'
if [ "$(wc -l <"$TMP/text")" -eq 5 ] && grep -qzE "^$pattern" "$TMP/text"; then
  pass "text output has the five summary lines"
else
  fail "text output does not match the expected lines:"
  cat "$TMP/text"
fi
peak=$(sed -n 's/^peak: \([0-9]*\) bytes.*/\1/p' "$TMP/text")
lower=$(sed -n 's/^lower bound: \([0-9]*\) bytes.*/\1/p' "$TMP/text")
if [ -n "$peak" ] && [ -n "$lower" ] && [ "$peak" -ge "$lower" ] &&
  [ "$((peak * 100))" -le "$((lower * 102))" ]; then
  pass "peak $peak >= lower bound $lower, within 2%"
else
  fail "peak '$peak' vs lower bound '$lower'"
fi

run cu-memory-plan --json "$TRACE"
expect_rc "--json" 0
if python3 - "$TMP/out" "$num_allocs" "$peak" "$lower" <<'EOF'; then
import json, sys
out, num, peak, lower = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
text = open(out).read()
assert text.count("\n") == 1 and text.endswith("}\n"), "not one line: %r" % text[:200]
d = json.loads(text)
for key in ("peak_bytes", "lower_bound_bytes", "num_buffers", "planning_seconds", "ratio"):
    assert key in d, "missing key " + key
assert d["num_buffers"] == num, d
assert d["peak_bytes"] == peak and d["lower_bound_bytes"] == lower, d
assert d["planning_seconds"] >= 0 and abs(d["ratio"] - peak / lower) < 1e-6, d
assert "buffers" not in d
EOF
  pass "--json prints one JSON object with the same numbers as the text"
else
  fail "--json output: $(head -c 400 "$TMP/out")"
fi

# With --buffers the JSON lists every buffer; check the plan independently of the planner: the
# allocator's block sizes, 256-byte offsets inside the peak, and no overlap between buffers alive
# at the same step (a sweep over the steps).
run cu-memory-plan --json --buffers "$TRACE"
expect_rc "--json --buffers" 0
if python3 - "$TMP/out" "$TRACE" <<'EOF'; then
import json, sys
d = json.load(open(sys.argv[1]))
recs = [l.split() for l in open(sys.argv[2]) if l[0] in "mp" and l.split()[-1] != "0"]
bufs = d["buffers"]
assert len(bufs) == len(recs) == d["num_buffers"]
up = lambda n: (n + 255) // 256 * 256
for b, r in zip(bufs, recs):
    assert b["kind"] == r[0] and b["id"] == int(r[-1]), (b, r)
    size = up(int(r[2])) if r[0] == "m" else up(int(r[2])) * int(r[3])
    assert b["size"] == size, (b, r)
    assert b["offset"] % 256 == 0 and b["offset"] + b["size"] <= d["peak_bytes"], b
    assert b["begin"] < b["end"], b
events = sorted([(b["begin"], 1, i) for i, b in enumerate(bufs)] +
                [(b["end"], 0, i) for i, b in enumerate(bufs)])
alive, alive_bytes, most = set(), 0, 0
for _, kind, i in events:
    b = bufs[i]
    if kind == 0:
        alive.discard(i)
        alive_bytes -= b["size"]
        continue
    for j in alive:
        o = bufs[j]
        assert b["offset"] + b["size"] <= o["offset"] or o["offset"] + o["size"] <= b["offset"], (b, o)
    alive.add(i)
    alive_bytes += b["size"]
    most = max(most, alive_bytes)
assert most == d["lower_bound_bytes"], (most, d["lower_bound_bytes"])
assert d["peak_bytes"] == max(b["offset"] + b["size"] for b in bufs)
EOF
  pass "--buffers: sizes, alignment, peak, lower bound and no live overlaps check out"
else
  fail "--json --buffers output failed the independent check"
fi

run cu-memory-plan --buffers "$TRACE"
expect_rc "--buffers (text)" 0
if [ "$(wc -l <"$TMP/out")" -eq $((5 + 1 + num_allocs)) ] &&
  grep -qE '^ +index +kind +request +size +offset +begin +end$' "$TMP/out" &&
  grep -qE '^ +0 +p +1536x1200 +1966080 +[0-9]+ +0 +[0-9]+$' "$TMP/out"; then
  pass "--buffers lists every buffer after the summary"
else
  fail "--buffers table: $(sed -n '5,8p' "$TMP/out")"
fi

"$BIN/cu-memory-plan" --print-args=false - <"$TRACE" >"$TMP/out" 2>"$TMP/err"
if cmp -s <(grep -v '^planning time' "$TMP/out") <(grep -v '^planning time' "$TMP/text"); then
  pass "reads stdin"
else
  fail "reading stdin: $(cat "$TMP/out" "$TMP/err")"
fi

# Thread selection: thread 1 frees thread 0's pointer 1.
printf '# cuctx-allocator-trace 1\nm 0 1000 1\nm 1 2000 2\nf 1 1\ns 0\nf 0 2\n' >"$TMP/two.trace"
expect_error "two threads need --thread" cu-memory-plan 1 "has records of 2 threads \(0, 1\)" \
  "$TMP/two.trace"
run cu-memory-plan --thread=1 "$TMP/two.trace"
if [ "$rc" -eq 0 ] && grep -qx "buffers: 1" "$TMP/out" && grep -qx "peak: 2048 bytes (0.0 MiB)" "$TMP/out"; then
  pass "--thread=1 plans thread 1 only"
else
  fail "--thread=1 (exit $rc): $(cat "$TMP/out" "$TMP/err")"
fi
expect_error "a thread not in the trace" cu-memory-plan 1 "no records of thread 7 \(threads found: 0, 1\)" \
  --thread=7 "$TMP/two.trace"
expect_error "a negative thread" cu-memory-plan 2 "--thread must be >= 0" --thread=-2 "$TMP/two.trace"

# Bad input: exit 1 with one clear line.
printf 'm 0 1000 1\nm 0 abc 2\n' >"$TMP/bad.trace"
expect_error "malformed trace" cu-memory-plan 1 "line 2: wrong number or type of fields: 'm 0 abc 2'" \
  "$TMP/bad.trace"
printf 'm 0 1000 1\nf 0 9\n' >"$TMP/bad-free.trace"
expect_error "free of an unknown pointer" cu-memory-plan 1 "line 2: free of a pointer id that is not live" \
  "$TMP/bad-free.trace"
expect_error "not a trace" cu-memory-plan 1 "line 1: unknown record" "$DATA/m23.txt"
: >"$TMP/empty.trace"
expect_error "empty trace" cu-memory-plan 1 "no records" "$TMP/empty.trace"
expect_error "missing trace file" cu-memory-plan 1 "cannot open" "$TMP/no-such.trace"

expect_usage_errors cu-memory-plan "$TRACE"
expect_bare_usage "no arguments" cu-memory-plan 1
mkdir -p "$TMP/adir"
expect_error "a directory as the trace" cu-memory-plan 1 "'.*/adir' is a directory, not a file to read" \
  "$TMP/adir"
expect_help cu-memory-plan --json --thread --buffers

finish
