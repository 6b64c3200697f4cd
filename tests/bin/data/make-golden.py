#!/usr/bin/env python3
# tests/bin/data/make-golden.py: writes the golden files of the tool tests from the Kaldi format as
# documented (matrix/matrix-io.cc, matrix/compressed-matrix.h), independently of the C++ code.
# Usage: python3 tests/bin/data/make-golden.py   (rewrites the files next to this script)
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))

M23 = [[1.0, -2.5, 3.0], [0.125, 100.0, -7.0]]  # every value has a short exact decimal form
V4 = [1.0, -2.5, 3.0, 0.125]


def write(name, data):
    with open(os.path.join(HERE, name), "wb") as f:
        f.write(data)


def fmt(x):  # Kaldi text writers use an ostream of precision 7, i.e. printf's %.7g
    return "%.7g" % x


def int32(v):  # binary integer: a size byte (4) then the value, little-endian
    return b"\x04" + struct.pack("<i", v)


def text_matrix(rows):
    return (" [" + "".join("\n  " + "".join(fmt(x) + " " for x in r) for r in rows) + "]\n").encode()


def binary_matrix(rows, kind):
    code = "<f" if kind == "FM" else "<d"
    body = b"".join(struct.pack(code, x) for r in rows for x in r)
    return b"\0B" + kind.encode() + b" " + int32(len(rows)) + int32(len(rows[0])) + body


def text_vector(v):
    return (" [ " + "".join(fmt(x) + " " for x in v) + "]\n").encode()


def binary_vector(v, kind):
    code = "<f" if kind == "FV" else "<d"
    return b"\0B" + kind.encode() + b" " + int32(len(v)) + b"".join(struct.pack(code, x) for x in v)


write("m23.txt", text_matrix(M23))
write("m23.fm.bin", binary_matrix(M23, "FM"))
write("m23.dm.bin", binary_matrix(M23, "DM"))
write("m23-scaled.txt", text_matrix([[2 * x for x in r] for r in M23]))
write("v4.txt", text_vector(V4))
write("v4.fv.bin", binary_vector(V4, "FV"))
write("v4.dv.bin", binary_vector(V4, "DV"))
write("v4-scaled.txt", text_vector([-x for x in V4]))

# Compressed matrices. Header (raw, no size bytes): float min_value, float range, int32 rows,
# int32 cols. CM2 decodes uint16 u to min + u * float(range / 65535) and CM3 decodes byte b to
# min + b * float(range / 255); with range 65535 (CM2) or 255 (CM3) the step is exactly 1.0f, so
# the values below are exact: CM2 = -100 + u, CM3 = -10 + b.
CM2_U = [[0, 1, 100], [200, 65535, 7]]
write("m23.cm2.bin", b"\0BCM2 " + struct.pack("<ffii", -100.0, 65535.0, 2, 3) +
      b"".join(struct.pack("<H", u) for r in CM2_U for u in r))
write("m23.cm2.txt", text_matrix([[-100.0 + u for u in r] for r in CM2_U]))
CM3_B = [[0, 10, 255], [20, 30, 5]]
write("m23.cm3.bin", b"\0BCM3 " + struct.pack("<ffii", -10.0, 255.0, 2, 3) +
      bytes(b for r in CM3_B for b in r))
write("m23.cm3.txt", text_matrix([[-10.0 + b for b in r] for r in CM3_B]))

# Multiplication: A (2x3) * B (3x2), small integers so that any summation order is exact.
A = [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]
B = [[7.0, 8.0], [9.0, 10.0], [11.0, 12.0]]
AB = [[sum(A[i][k] * B[k][j] for k in range(3)) for j in range(2)] for i in range(2)]  # 58 64 / 139 154
write("a23.txt", text_matrix(A))
write("b32.fm.bin", binary_matrix(B, "FM"))
write("ab22.txt", text_matrix(AB))
BT = [list(c) for c in zip(*B)]  # B^T (2x3): with --transpose-b, A * (B^T)^T = A B
write("bt23.txt", text_matrix(BT))
AT = [list(c) for c in zip(*A)]  # A^T (3x2): with --transpose-a gives A B again
write("at32.txt", text_matrix(AT))

# Malformed inputs.
write("bad-number.txt", b" [\n  1 2 \n  3 x ]\n")
write("ragged.txt", b" [\n  1 2 \n  3 ]\n")
write("truncated.fm.bin", binary_matrix(M23, "FM")[:-5])
write("bad-header.bin", b"\0XFM ")
