#!/usr/bin/env bash
# tools/memory-viz.sh: draws a cuctx memory snapshot (PyTorch's format; cu-memory-snapshot.h) with
# PyTorch's own viewer, online (torch installed, the viewer's scripts from the web) or offline
# (local copies of the viewer's files; no torch, no internet).
#
# Online:  tools/memory-viz.sh SNAPSHOT OUT.html [OUT.png]
#   writes OUT.html (the "Active Memory Timeline": python -m torch.cuda._memory_viz trace_plot),
#   OUT-segments.html (the "Allocator State History": segment_plot), prints PyTorch's text
#   summary of the segments (the `stats` subcommand, which also asserts that every segment's
#   blocks add up) and, given OUT.png, screenshots OUT.html with headless Chromium/Chrome (or
#   Python playwright's Chromium) after the page has drawn. Needs python3 with torch (the GPU host
#   has it). The pages load MemoryViz.js and d3 from the web (cdn.jsdelivr.net, cdn.skypack.dev):
#   on a host without internet the screenshot is blank, while the text summary still proves that
#   PyTorch reads the file.
#
# Offline: tools/memory-viz.sh --offline SNAPSHOT.pickle OUTDIR [WIDTHxHEIGHT]  (default 1600x1000)
#   writes OUTDIR/trace.png (the "Active Memory Timeline") and OUTDIR/segments.png (the "Allocator
#   State History" at the last event, or at event SEG_EVENT), the HTML pages PyTorch's
#   torch/cuda/_memory_viz.py wrote, self-contained copies of them, the rendered DOM and the
#   browser's console log, and checks that the viewer can rewind the allocator's state to every
#   event of the trace: exit 1 when it fails on one ("SWEEP FAIL: <event>: ..."). PyTorch's pages
#   import MemoryViz.js and d3 v5 from CDNs; this mode inlines local copies: VIZ_DIR (default:
#   this script's folder/../.viz) holding _memory_viz.py (from a torch wheel:
#   torch/cuda/_memory_viz.py; it needs only the standard library), MemoryViz.js (pytorch's
#   torch/utils/viz/MemoryViz.js, the same version) and d3.v5.min.js (d3 v5's UMD build), and
#   CHROME (a chromium or chromium-headless-shell binary; CHROME_LIBS is put on its
#   LD_LIBRARY_PATH). The sweep: a copy of the segments page clicks every event in turn (the
#   viewer rewinds the segments through the trace to that event and redraws) and records any
#   exception; its time grows with the square of the events, so sweep snapshots of a few
#   thousand events (a small --cuda-allocator-history).
set -euo pipefail

offline() {

  if [ $# -lt 2 ] || [ $# -gt 3 ]; then
    echo "usage: $0 --offline SNAPSHOT.pickle OUTDIR [WIDTHxHEIGHT]" >&2
    exit 2
  fi
  SNAP=$(realpath "$1")
  OUTDIR=$2
  SIZE=${3:-1600x1000}
  W=${SIZE%x*}
  H=${SIZE#*x}
  HERE=${VIZ_DIR:-$(cd "$(dirname "$0")/.." && pwd)/.viz}
  for f in _memory_viz.py MemoryViz.js d3.v5.min.js; do
    [ -f "$HERE/$f" ] || { echo "$0: $HERE/$f is missing (set VIZ_DIR; see the header)" >&2; exit 2; }
  done

  CHROME=${CHROME:-$(command -v chromium-headless-shell || command -v chromium || echo chromium)}
  CHROME_LIBS=${CHROME_LIBS:-}

  mkdir -p "$OUTDIR"
  OUTDIR=$(realpath "$OUTDIR")

  # 1. PyTorch's own HTML generators (stdlib-only script; no torch import needed).
  python3 "$HERE/_memory_viz.py" trace_plot   "$SNAP" -o "$OUTDIR/trace.html"
  python3 "$HERE/_memory_viz.py" segment_plot "$SNAP" -o "$OUTDIR/segments.html"

  # 2. Offline, self-contained copies.
  python3 - "$HERE" "$OUTDIR" <<'PY'
import os, sys, pathlib
here, outdir = map(pathlib.Path, sys.argv[1:3])
mv = (here / "MemoryViz.js").read_text()
d3 = (here / "d3.v5.min.js").read_text()

imports = {
    'import * as d3 from "https://cdn.skypack.dev/d3@5";': "const d3 = window.d3;",
    'import {axisLeft} from "https://cdn.skypack.dev/d3-axis@1";': "const {axisLeft} = window.d3;",
    'import {scaleLinear} from "https://cdn.skypack.dev/d3-scale@1";': "const {scaleLinear} = window.d3;",
    'import {zoom, zoomIdentity} from "https://cdn.skypack.dev/d3-zoom@1";': "const {zoom, zoomIdentity} = window.d3;",
    'import {brushX} from "https://cdn.skypack.dev/d3-brush@1";': "const {brushX} = window.d3;",
}
for old, new in imports.items():
    assert mv.count(old) == 1, f"MemoryViz.js import not found: {old}"
    mv = mv.replace(old, new)
assert "skypack" not in mv
# Inlined into the page's own module, so the exports become plain functions.
assert mv.count("export function ") == 2
mv = mv.replace("export function ", "function ")
(outdir / "MemoryViz.offline.js").write_text(mv)  # for reference / debugging

cdn_import = 'import {add_local_files} from "https://cdn.jsdelivr.net/gh/pytorch/pytorch@main/torch/utils/viz/MemoryViz.js"'
for name in ("trace", "segments"):
    html = (outdir / f"{name}.html").read_text()
    assert html.count(cdn_import) == 1, f"{name}.html: CDN import line not found"
    for blob in (d3, mv):
        assert "</script" not in blob.lower()
    html = html.replace(cdn_import, "// ---- MemoryViz.js (offline patched copy) ----\n" + mv +
                        "\n// ---- end MemoryViz.js ----\n")
    html = html.replace("<head>\n</head>", "<head>\n<meta charset=\"utf-8\">\n<script>\n" + d3 + "\n</script>\n</head>", 1)
    assert "window.d3" in html and "https://" not in html.replace("https://d3js.org", "").replace(
        "https://stackoverflow.com", ""), "unexpected remote URL left in offline html"
    (outdir / f"{name}.offline.html").write_text(html)

# segments.check.html: same page plus a classic script that, once the view is drawn, clicks every
# event of the 'Allocator State History' list in turn (this runs the viewer's rewind of the allocator
# state to that event and redraws the segment map), records any exception, then leaves the view on
# event SEG_EVENT (default: the last one). The result goes to document.title and the console.
seg_event = os.environ.get("SEG_EVENT", "")
check = """
<script>
(function () {
  const errors = [];
  window.addEventListener('error', e => errors.push(String(e.message)));
  setTimeout(() => {
    const lists = document.querySelectorAll('div[style*="grid-row: 1"][style*="monospace"]');
    if (lists.length === 0) { document.title = 'SWEEP FAIL: no event list rendered'; console.error(document.title); return; }
    const pres = lists[0].querySelectorAll('pre');
    const bad = [];
    for (let i = 0; i < pres.length; i++) {
      const n = errors.length;
      pres[i].dispatchEvent(new MouseEvent('mousedown', {bubbles: true}));
      if (errors.length > n) bad.push(i + ': ' + errors.slice(n).join('; '));
    }
    const want = SEG_EVENT_VALUE;
    const sel = (want === null || want >= pres.length) ? pres.length - 1 : (want < 0 ? pres.length + want : want);
    if (pres.length > 0) pres[sel].dispatchEvent(new MouseEvent('mousedown', {bubbles: true}));
    document.title = bad.length === 0 ? ('SWEEP OK: ' + pres.length + ' events, shown event ' + sel)
                                      : ('SWEEP FAIL: ' + bad.join(' | '));
    if (bad.length) console.error(document.title); else console.log(document.title);
  }, 1000);
})();
</script>
""".replace("SEG_EVENT_VALUE", str(int(seg_event)) if seg_event.strip() else "null")
html = (outdir / "segments.offline.html").read_text()
(outdir / "segments.check.html").write_text(html.replace("</body>", check + "</body>", 1))
PY

  # 3. Screenshots (+ DOM dump and console log for diagnosis).
  shot() {
    local name=$1
    local url="file://$OUTDIR/$name.${2:-offline}.html"
    local flags=(--no-sandbox --disable-gpu --hide-scrollbars --allow-file-access-from-files
                 --virtual-time-budget=5000 --window-size="$W,$H")
    LD_LIBRARY_PATH="$CHROME_LIBS" "$CHROME" "${flags[@]}" --enable-logging=stderr --v=0 \
        --screenshot="$OUTDIR/$name.png" "$url" >/dev/null 2>"$OUTDIR/$name.console.log" || true
    LD_LIBRARY_PATH="$CHROME_LIBS" "$CHROME" "${flags[@]}" --dump-dom "$url" \
        >"$OUTDIR/$name.dom.html" 2>/dev/null || true
    if [ ! -s "$OUTDIR/$name.png" ]; then
      echo "ERROR: no screenshot for $name; see $OUTDIR/$name.console.log" >&2
      return 1
    fi
    if grep -E "CONSOLE|Uncaught" "$OUTDIR/$name.console.log" | grep -v "console.log" | grep -qiE "error|uncaught"; then
      echo "WARNING: browser console errors for $name:" >&2
      grep -iE "CONSOLE|Uncaught" "$OUTDIR/$name.console.log" | grep -iE "error|uncaught" | head -5 | cut -c1-400 >&2 || true
    fi
    echo "$OUTDIR/$name.png"
  }
  shot trace
  shot segments check
  title=$(grep -o '<title>[^<]*</title>' "$OUTDIR/segments.dom.html" | sed 's/<[^>]*>//g' || true)
  echo "segments sweep: ${title:-NO RESULT (script did not run; see $OUTDIR/segments.console.log)}"
  case "$title" in "SWEEP OK"*) ;; *) exit 1 ;; esac
}

online() {
  if [ $# -lt 2 ] || [ $# -gt 3 ]; then
    echo "usage: $0 SNAPSHOT OUT.html [OUT.png]  or  $0 --offline SNAPSHOT OUTDIR [WxH]" >&2
    exit 2
  fi
  snapshot=$1 html=$2 png=${3:-}
  [ -f "$snapshot" ] || { echo "$0: no snapshot '$snapshot'" >&2; exit 2; }
  python3 -c 'import torch' 2>/dev/null || { echo "$0: python3 cannot import torch" >&2; exit 3; }

  echo "== PyTorch's summary of $snapshot (torch.cuda._memory_viz stats)"
  python3 -m torch.cuda._memory_viz stats "$snapshot"
  python3 -m torch.cuda._memory_viz trace_plot "$snapshot" -o "$html"
  segments_html=${html%.html}-segments.html
  python3 -m torch.cuda._memory_viz segment_plot "$snapshot" -o "$segments_html"
  echo "wrote $html ($(wc -c <"$html") bytes) and $segments_html"

  [ -n "$png" ] || exit 0
  url="file://$(cd "$(dirname "$html")" && pwd)/$(basename "$html")"
  for browser in chromium chromium-browser google-chrome google-chrome-stable chrome; do
    if command -v "$browser" >/dev/null; then
      # The virtual time budget lets the module scripts load and draw before the shot.
      "$browser" --headless=new --disable-gpu --no-sandbox --hide-scrollbars \
        --window-size=1600,1000 --virtual-time-budget=20000 --screenshot="$png" "$url" 2>/dev/null
      echo "wrote $png with $browser"
      exit 0
    fi
  done
  if python3 -c 'import playwright' 2>/dev/null; then
    python3 - "$url" "$png" <<'PY'
import sys
from playwright.sync_api import sync_playwright
url, png = sys.argv[1], sys.argv[2]
with sync_playwright() as p:
    browser = p.chromium.launch()
    page = browser.new_page(viewport={"width": 1600, "height": 1000})
    page.goto(url)
    page.wait_for_timeout(15000)  # the viewer loads its scripts, then draws
    page.screenshot(path=png)
    browser.close()
PY
    echo "wrote $png with playwright"
    exit 0
  fi
  echo "$0: no headless Chromium/Chrome or playwright found: no screenshot" >&2
  exit 4
}

if [ "${1:-}" = "--offline" ]; then
  shift
  offline "$@"
else
  online "$@"
fi
