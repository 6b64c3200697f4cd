#!/usr/bin/env bash
# tools/memory-viz.sh: draws a cuctx memory snapshot (PyTorch's format; cu-memory-snapshot.h) with
# PyTorch's own viewer, and optionally screenshots it in a headless browser.
# Usage: tools/memory-viz.sh SNAPSHOT OUT.html [OUT.png]
#   writes OUT.html (the "Active Memory Timeline": python -m torch.cuda._memory_viz trace_plot),
#   OUT-segments.html (the "Allocator State History": segment_plot), prints PyTorch's text
#   summary of the segments (the `stats` subcommand, which also asserts that every segment's
#   blocks add up) and, given OUT.png, screenshots OUT.html with headless Chromium/Chrome (or
#   Python playwright's Chromium) after the page has drawn.
# Needs python3 with torch (the GPU host has it). The pages load MemoryViz.js and d3 from the web
# (cdn.jsdelivr.net, cdn.skypack.dev): on a host without internet the screenshot is blank, while
# the text summary still proves that PyTorch reads the file.
set -euo pipefail
if [ $# -lt 2 ] || [ $# -gt 3 ]; then
  echo "usage: $0 SNAPSHOT OUT.html [OUT.png]" >&2
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
