#!/usr/bin/env bash
# tests/bin/copy-matrix-test.sh: end-to-end checks of bin/copy-matrix against golden files in
# tests/bin/data (made by make-golden.py from the Kaldi format). Run by `make test`.
source "$(dirname "$0")/tool-test-lib.sh"

# Conversions against the golden files.
run copy-matrix "$DATA/m23.txt" "$TMP/a.bin"
expect_rc "text -> binary float" 0
expect_same "text -> binary float matches the golden FM file" "$TMP/a.bin" "$DATA/m23.fm.bin"
run copy-matrix --binary=false "$DATA/m23.fm.bin" "$TMP/a.txt"
expect_same "binary float -> text matches the golden text" "$TMP/a.txt" "$DATA/m23.txt"
run copy-matrix --double "$DATA/m23.txt" "$TMP/d.bin"
expect_same "text -> binary double (--double) matches the golden DM file" "$TMP/d.bin" "$DATA/m23.dm.bin"
run copy-matrix "$DATA/m23.dm.bin" "$TMP/f.bin"
expect_same "double -> float matches the golden FM file" "$TMP/f.bin" "$DATA/m23.fm.bin"
run copy-matrix --double=true "$DATA/m23.fm.bin" "$TMP/d2.bin"
expect_same "float -> double matches the golden DM file" "$TMP/d2.bin" "$DATA/m23.dm.bin"
run copy-matrix --scale=2 --binary=false "$DATA/m23.fm.bin" "$TMP/s.txt"
expect_same "--scale=2" "$TMP/s.txt" "$DATA/m23-scaled.txt"

# Round trips binary -> text -> binary, byte-identical, in both precisions.
run copy-matrix --binary=false "$DATA/m23.fm.bin" "$TMP/r.txt"
run copy-matrix "$TMP/r.txt" "$TMP/r.bin"
expect_same "float binary -> text -> binary round trip" "$TMP/r.bin" "$DATA/m23.fm.bin"
run copy-matrix --double --binary=false "$DATA/m23.dm.bin" "$TMP/rd.txt"
run copy-matrix --double "$TMP/rd.txt" "$TMP/rd.bin"
expect_same "double binary -> text -> binary round trip" "$TMP/rd.bin" "$DATA/m23.dm.bin"
run copy-matrix --binary=false "$TMP/r.txt" "$TMP/r2.txt"
expect_same "text -> text is unchanged" "$TMP/r2.txt" "$DATA/m23.txt"

# Compressed input (decoded values are exact by construction, see make-golden.py).
run copy-matrix --binary=false "$DATA/m23.cm2.bin" "$TMP/cm2.txt"
expect_rc "CM2 input" 0
expect_same "CM2 input decodes to the golden text" "$TMP/cm2.txt" "$DATA/m23.cm2.txt"
run copy-matrix --binary=false "$DATA/m23.cm3.bin" "$TMP/cm3.txt"
expect_same "CM3 input decodes to the golden text" "$TMP/cm3.txt" "$DATA/m23.cm3.txt"

# "-" is stdin / stdout, in both modes.
"$BIN/copy-matrix" --print-args=false - - <"$DATA/m23.txt" >"$TMP/p.bin" 2>"$TMP/err"
rc=$?
expect_rc "stdin -> stdout" 0
expect_same "text on stdin -> binary on stdout" "$TMP/p.bin" "$DATA/m23.fm.bin"
"$BIN/copy-matrix" --print-args=false --binary=false - - <"$DATA/m23.fm.bin" >"$TMP/p.txt" 2>"$TMP/err"
expect_same "binary on stdin -> text on stdout" "$TMP/p.txt" "$DATA/m23.txt"
"$BIN/copy-matrix" --print-args=false "$DATA/m23.txt" - 2>/dev/null |
  "$BIN/copy-matrix" --print-args=false --binary=false - "$TMP/pipe.txt" 2>/dev/null
expect_same "a pipe between two copies" "$TMP/pipe.txt" "$DATA/m23.txt"

# --config reads options from a file; the command line overrides it.
printf -- '--binary=false\n--scale=2  # a comment\n' >"$TMP/opts.conf"
run copy-matrix --config="$TMP/opts.conf" "$DATA/m23.fm.bin" "$TMP/c.txt"
expect_same "--config file" "$TMP/c.txt" "$DATA/m23-scaled.txt"
run copy-matrix --config="$TMP/opts.conf" --scale=1 "$DATA/m23.fm.bin" "$TMP/c1.txt"
expect_same "command line overrides --config" "$TMP/c1.txt" "$DATA/m23.txt"

# --print-args (default true, as in Kaldi) echoes the command line to stderr.
"$BIN/copy-matrix" "$DATA/m23.txt" "$TMP/e.bin" 2>"$TMP/err"
if grep -q "copy-matrix .*m23.txt" "$TMP/err"; then pass "command line echoed by default"; else
  fail "no command line echo on stderr: $(cat "$TMP/err")"
fi

# Malformed input and failures: exit 1, one line.
expect_error "missing input file" copy-matrix 1 "cannot open '.*no-such.mat' for reading" \
  "$TMP/no-such.mat" "$TMP/x"
expect_error "bad number in text" copy-matrix 1 "bad number \"x\"" "$DATA/bad-number.txt" "$TMP/x"
expect_error "ragged text rows" copy-matrix 1 "row" "$DATA/ragged.txt" "$TMP/x"
expect_error "truncated binary" copy-matrix 1 "truncated" "$DATA/truncated.fm.bin" "$TMP/x"
expect_error "bad binary header" copy-matrix 1 "not followed by 'B'" "$DATA/bad-header.bin" "$TMP/x"
expect_error "a vector is not a matrix" copy-matrix 1 "found \"FV\"" "$DATA/v4.fv.bin" "$TMP/x"
expect_error "empty input" copy-matrix 1 "expected '\['" /dev/null "$TMP/x"
expect_error "unwritable output" copy-matrix 1 "cannot open '.*' for writing" \
  "$DATA/m23.txt" "$TMP/no-such-dir/out.mat"

# Messages name a directory as one, escape control bytes, and give byte offsets on stdin too.
mkdir "$TMP/adir"
expect_error "a directory as input" copy-matrix 1 "'.*/adir' is a directory, not a file to read" \
  "$TMP/adir" "$TMP/x"
expect_error "a directory as output" copy-matrix 1 "'.*/adir' is a directory, not a file to write" \
  "$DATA/m23.txt" "$TMP/adir"
printf '\0B\004\005' >"$TMP/ctl.bin"
expect_error "control bytes are escaped" copy-matrix 1 'after token "\\x04\\x05" at byte 2' \
  "$TMP/ctl.bin" "$TMP/x"
expect_error "control bytes in a file name are escaped" copy-matrix 1 "cannot open '.*/a"'\\x01b'"'" \
  "$TMP/a"$'\001'"b" "$TMP/x"
if LC_ALL=C grep -q $'[\001-\010\016-\037]' "$TMP/err"; then fail "raw control bytes on stderr"; else
  pass "no raw control bytes on stderr"
fi
"$BIN/copy-matrix" --print-args=false - "$TMP/x" <"$DATA/bad-number.txt" 2>"$TMP/err"
rc=$?
expect_rc "bad number on stdin" 1
file_msg=$("$BIN/copy-matrix" --print-args=false "$DATA/bad-number.txt" "$TMP/x" 2>&1 | sed 's/.*: bad/bad/')
grep -q "reading standard input: bad number \"x\" in text matrix row 1 at byte 14" "$TMP/err" &&
  [ "$(sed 's/.*: bad/bad/' "$TMP/err")" = "$file_msg" ] &&
  pass "stdin messages give the byte offset the file message gives ($file_msg)" ||
  fail "stdin message '$(cat "$TMP/err")' vs file message '$file_msg'"
cat "$DATA/truncated.fm.bin" | "$BIN/copy-matrix" --print-args=false - "$TMP/x" 2>"$TMP/err"
grep -q "reading standard input: .*at byte [0-9]" "$TMP/err" && pass "offset for a pipe: $(cat "$TMP/err")" ||
  fail "no offset for a pipe: $(cat "$TMP/err")"

# Non-finite option values are usage errors (ParseOptions refuses them for every float option).
for bad in nan inf -inf NaN; do
  expect_error "--scale=$bad" copy-matrix 2 "invalid value '$bad' for option --scale: expected a finite float" \
    --scale="$bad" "$DATA/m23.txt" "$TMP/x"
done

# Usage errors: exit 2, one line.
expect_usage_errors copy-matrix "$DATA/m23.txt" "$TMP/x"
expect_error "bad --binary value" copy-matrix 2 "invalid value 'maybe' for option --binary" \
  --binary=maybe "$DATA/m23.txt" "$TMP/x"
expect_error "bad --scale value" copy-matrix 2 "invalid value 'abc' for option --scale" \
  --scale=abc "$DATA/m23.txt" "$TMP/x"
expect_bare_usage "no arguments" copy-matrix 2
expect_bare_usage "one argument" copy-matrix 2 "$DATA/m23.txt"
expect_help copy-matrix --binary --scale --double
grep -q -- "--binary\[=BOOL\] .*(default: true)" "$TMP/err" && pass "--help shows --binary's default" ||
  fail "--help does not show --binary's default true"

finish
