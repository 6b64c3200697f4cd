"""speedlog.py: what bin-by-line.py, api-by-line.py, compare.py and api-compare.py share.
labels(LOG): the op lines of a speed test's log time-stamped by stamp-lines.py, in order, as
(time in ns, op with its extra dimensions in brackets, dim, speed printed).
load_table(PATH): a by-line table (tab-separated, a header row) as {(op, dim): row}, the last row
of each (op, dim) kept: Kaldi's main runs the CPU pass first, so the last is the GPU pass.
compare_module(): ../shared/kaldi-speed/compare.py (KALDI_SPEED: its folder), whose medians() reads
compare.sh's logs.
pair_key(OP, DIM): (op, dim) without blanks, which matches a log's pair to a table's row."""
import csv
import importlib.util
import os
import re

_LINE = re.compile(r'^(\d+\.\d+) .*For (\S+), for dim = (\d+)(.*?)speed was ([-+0-9.eE]+)')


def labels(log):
    out = []
    with open(log) as f:
        for line in f:
            m = _LINE.search(line)
            if m:
                extra = re.sub(r'[ ,]+', ' ', m.group(4)).strip()
                op = m.group(2) + ('[' + extra + ']' if extra else '')
                out.append((int(float(m.group(1)) * 1e9), op, int(m.group(3)), float(m.group(5))))
    return out


def load_table(path):
    rows = {}
    with open(path) as f:
        for r in csv.DictReader(f, delimiter='\t'):
            rows[(r['op'], int(r['dim']))] = r
    return rows


def compare_module():
    folder = os.environ.get("KALDI_SPEED", "../shared/kaldi-speed")
    spec = importlib.util.spec_from_file_location("kaldi_compare", os.path.join(folder, "compare.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def pair_key(op, dim):
    return re.sub(r"\s+", "", op), str(dim).replace(" ", "")
