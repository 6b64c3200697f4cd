#!/usr/bin/env python3
"""tests/check-memory-snapshot.py: checks that files are memory snapshots in PyTorch's format
(cudamatrix/cu-memory-snapshot.h), as PyTorch's readers (torch.cuda._memory_viz, MemoryViz.js)
expect them: loads each with pickle alone and checks the schema, that every segment's blocks tile
it, and that the device trace replayed backwards from the segments never refers to a block or a
segment that is not there (what the viewer's segment view does).

Where PyTorch is installed (the GPU host), each file also goes through PyTorch's own readers:
torch.cuda._memory_viz's segsum (which asserts that every segment's sizes add up), trace,
trace_plot and segment_plot (the HTML pages, built without a browser).

Marks (cu-memory-snapshot.h's mapping) are checked too: a graph pool's segments carry the
segment_pool_id of their kind ((n, 0) private and foreign, (0, n) shared, n > 0), the device's
main pool (0, 0); --expect-kind KIND asks for a segment or block whose cuctx_kind is KIND,
--expect-mark TEXT for a marking frame ("cuctx:0:...") containing TEXT on a segment, block or
event.

Usage: check-memory-snapshot.py [--expect-events] [--expect-oom] [--expect-kind KIND]...
                                [--expect-mark TEXT]... [--expect-active] FILE...
Prints one line per file; exits 1 on the first failure, naming the file and the problem.
"""
import pickle
import sys

SEGMENT_KEYS = {"device": int, "address": int, "total_size": int, "allocated_size": int,
                "active_size": int, "requested_size": int, "stream": int, "segment_type": str,
                "segment_pool_id": tuple, "is_expandable": bool, "frames": list, "blocks": list}
BLOCK_KEYS = {"address": int, "size": int, "requested_size": int, "state": str, "frames": list}
EVENT_KEYS = {"action": str, "addr": int, "size": int, "stream": int, "time_us": int,
              "frames": list}
STATES = {"active_allocated", "active_pending_free", "inactive"}
ACTIONS = {"alloc", "free_requested", "free_completed", "segment_alloc", "segment_free",
           "segment_map", "segment_unmap", "snapshot", "oom"}


def check_keys(what, obj, keys):
    assert isinstance(obj, dict), "%s is %s, not a dict" % (what, type(obj).__name__)
    for key, kind in keys.items():
        assert key in obj, "%s lacks %r (has %s)" % (what, key, sorted(obj))
        value = obj[key]
        ok = isinstance(value, kind) and not (kind is int and isinstance(value, bool))
        assert ok, "%s[%r] = %r is not %s" % (what, key, value, kind.__name__)


def check_frames(what, frames):
    for f in frames:
        check_keys(what + " frame", f, {"filename": str, "line": int, "name": str})


# segment_pool_id of each marked kind: a function of the pair that must hold.
POOL_IDS = {
    "region": lambda p: p == (0, 0), "expandable": lambda p: p == (0, 0),
    "direct": lambda p: p == (0, 0),
    "graph_pool_private": lambda p: p[0] > 0 and p[1] == 0,
    "graph_pool_foreign": lambda p: p[0] > 0 and p[1] == 0,
    "graph_pool_shared": lambda p: p[0] == 0 and p[1] > 0,
    "graph_nodes": lambda p: p == (-2, 0), "pinned_host": lambda p: p == (-1, 0),
}


def marks_of(frames):
    return [f["name"] for f in frames if f.get("filename") == "cuctx" and f.get("line") == 0]


def merged(ranges):
    out = []
    for r in sorted(ranges):
        if out and out[-1][1] == r[0]:
            out[-1][1] = r[1]
        else:
            out.append(list(r))
    return out


def check(path, expect_events, expect_oom, expect_kinds, expect_active, expect_marks=()):
    with open(path, "rb") as f:
        data = pickle.load(f)
    assert isinstance(data, dict), "top level is not a dict"
    assert "segments" in data and "device_traces" in data, "keys: %s" % sorted(data)
    segments, traces = data["segments"], data["device_traces"]
    assert isinstance(segments, list) and isinstance(traces, list) and traces, "bad top level"
    kinds = set()
    marks = []
    active_blocks = 0
    live = {}  # (device, address) -> size of active blocks, as the viewer keys them
    mapped = {}  # device -> list of [start, end) ranges of segments
    for i, seg in enumerate(segments):
        what = "segment %d" % i
        check_keys(what, seg, SEGMENT_KEYS)
        check_frames(what, seg["frames"])
        assert len(seg["segment_pool_id"]) == 2, what + ": segment_pool_id is not a pair"
        kind = seg.get("cuctx_kind", "")
        kinds.add(kind)
        if kind in POOL_IDS:
            assert POOL_IDS[kind](seg["segment_pool_id"]), "%s: %s with segment_pool_id %r" % (
                what, kind, seg["segment_pool_id"])
        if kind.startswith("graph_"):
            assert marks_of(seg["frames"]), what + ": a graph pool's segment without its mark"
        marks += marks_of(seg["frames"])
        addr, allocated, requested, active = seg["address"], 0, 0, 0
        for j, b in enumerate(seg["blocks"]):
            bw = "%s block %d" % (what, j)
            check_keys(bw, b, BLOCK_KEYS)
            check_frames(bw, b["frames"])
            assert b["state"] in STATES, "%s: state %r" % (bw, b["state"])
            if "cuctx_kind" in b:
                kinds.add(b["cuctx_kind"])
            marks += marks_of(b["frames"])
            assert b["address"] == addr, "%s at %#x, expected %#x (blocks must tile)" % (
                bw, b["address"], addr)
            assert 0 < b["requested_size"] <= b["size"] or b["state"] == "inactive", bw
            if b["state"] == "active_allocated":
                allocated += b["size"]
                requested += b["requested_size"]
                active_blocks += 1
                live[(seg["device"], addr)] = b["size"]
            if b["state"] != "inactive":
                active += b["size"]
            addr += b["size"]
        assert addr - seg["address"] == seg["total_size"], "%s: blocks end at %#x, segment at %#x" % (
            what, addr, seg["address"] + seg["total_size"])
        assert seg["allocated_size"] == allocated, what + ": allocated_size"
        assert seg["active_size"] == active, what + ": active_size"
        assert seg["requested_size"] == requested, what + ": requested_size"
        mapped.setdefault(seg["device"], []).append([seg["address"], seg["address"] + seg["total_size"]])
    num_events = 0
    ooms = 0
    for device, trace in enumerate(traces):
        assert isinstance(trace, list), "device_traces[%d] is not a list" % device
        blocks = {k[1]: v for k, v in live.items() if k[0] == device}
        ranges = sorted(mapped.get(device, []))
        last_time = None
        # Replay backwards from the final state, as the viewer does.
        for k in range(len(trace) - 1, -1, -1):
            e = trace[k]
            what = "device %d event %d (%s)" % (device, k, e.get("action"))
            check_keys(what, e, EVENT_KEYS)
            check_frames(what, e["frames"])
            action = e["action"]
            assert action in ACTIONS, what + ": unknown action"
            marks += marks_of(e["frames"])
            if last_time is not None:
                assert e["time_us"] <= last_time, what + ": time goes backwards"
            last_time = e["time_us"]
            addr, size = e["addr"], e["size"]
            if action == "oom":
                assert "device_free" in e and isinstance(e["device_free"], int), what
                ooms += 1
            elif action == "alloc":
                assert blocks.get(addr) == size, "%s: no live block %#x of %d bytes after it" % (
                    what, addr, size)
                del blocks[addr]
            elif action == "free_completed":
                assert addr not in blocks, what + ": block live after its free"
                blocks[addr] = size
            elif action == "free_requested":
                assert blocks.get(addr) == size, what + ": free_requested of no block"
            elif action in ("segment_alloc", "segment_map"):
                if action == "segment_map":
                    ranges = merged(ranges)  # the viewer joins touching mapped ranges too
                hit = [r for r in ranges if r[0] <= addr and addr + size <= r[1]]
                assert hit, "%s: no segment holds [%#x, %#x)" % (what, addr, addr + size)
                r = hit[0]
                assert not any(r[0] <= a < r[1] for a in blocks if addr <= a < addr + size), \
                    what + ": a live block in memory that did not exist yet"
                ranges.remove(r)
                if r[0] < addr:
                    ranges.append([r[0], addr])
                if addr + size < r[1]:
                    ranges.append([addr + size, r[1]])
            elif action in ("segment_free", "segment_unmap"):
                assert not any(r[0] < addr + size and addr < r[1] for r in ranges), \
                    what + ": the memory is still a segment after it was given back"
                ranges.append([addr, addr + size])
            num_events += 1
    if expect_events:
        assert num_events > 0, "no events in device_traces"
    if expect_oom:
        assert ooms > 0, "no oom event"
    for kind in expect_kinds:
        assert kind in kinds, "no segment of kind %r (kinds: %s)" % (kind, sorted(kinds))
    if expect_active:
        assert active_blocks > 0, "no active_allocated block"
    for text in expect_marks:
        assert any(text in m for m in marks), "no mark containing %r (%d marks: %s)" % (
            text, len(marks), sorted(set(marks))[:8])
    return len(segments), active_blocks, num_events


def torch_reads(path):
    """Runs PyTorch's readers on the file; None when PyTorch is not installed."""
    try:
        from torch.cuda import _memory_viz as viz
    except Exception:  # noqa: BLE001 - no torch (or a broken one): nothing to compare with
        return None
    with open(path, "rb") as f:
        data = pickle.load(f)
    viz.segsum(data)
    viz.trace(data)
    pages = [viz.trace_plot(data), viz.segment_plot(data)]
    assert all("MemoryViz" in p for p in pages), "PyTorch's pages lack the viewer"
    return "torch %s read it" % __import__("torch").__version__


def main(argv):
    opts = {"--expect-events": False, "--expect-oom": False, "--expect-active": False}
    kinds = []
    marks = []
    files = []
    i = 0
    while i < len(argv):
        a = argv[i]
        if a in opts:
            opts[a] = True
        elif a == "--expect-kind":
            i += 1
            kinds.append(argv[i])
        elif a == "--expect-mark":
            i += 1
            marks.append(argv[i])
        else:
            files.append(a)
        i += 1
    if not files:
        print(__doc__, file=sys.stderr)
        return 2
    for path in files:
        try:
            n_seg, n_active, n_events = check(path, opts["--expect-events"], opts["--expect-oom"],
                                              kinds, opts["--expect-active"], marks)
        except Exception as e:  # noqa: BLE001 - every problem is a failed check here
            print("FAIL: %s: %s" % (path, e))
            return 1
        try:
            torch_note = torch_reads(path)
        except Exception as e:  # noqa: BLE001
            print("FAIL: %s: PyTorch's reader: %s: %s" % (path, type(e).__name__, e))
            return 1
        print("ok: %s: %d segments, %d active blocks, %d events%s" % (
            path, n_seg, n_active, n_events, "; " + torch_note if torch_note else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
