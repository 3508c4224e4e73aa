#!/usr/bin/env python3
"""Renders every committed report (reports/*.html, and reports/*.svg inside a bare page) in Debian's
headless Chromium at a laptop's 1280 x 800 window, and fails on text a reader cannot see whole: an
SVG text (title, tick, legend, axis label) drawn past its SVG's edge, or a page wider than the window
(a table that does not scroll inside its box).

Usage: rendered_reports.py SOURCE_DIR. Exit 77 (CTest's skip) when chromium is not installed:
scripts/test installs it.
"""
import glob
import html
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

CHECK = r"""
(function () {
  var bad = [];
  var root = document.documentElement;
  var drawn = 0, texts = 0;
  if (root.scrollWidth > window.innerWidth + 1)
    bad.push('the page is ' + root.scrollWidth + ' px wide in a ' + window.innerWidth + ' px window');
  Array.prototype.forEach.call(document.querySelectorAll('svg'), function (svg, i) {
    var box = svg.getBoundingClientRect();
    Array.prototype.forEach.call(svg.querySelectorAll('text'), function (t) {
      var r = t.getBoundingClientRect();
      texts += 1;
      if (r.width === 0) return;
      drawn += 1;
      if (r.left < box.left - 0.5 || r.right > box.right + 0.5 || r.top < box.top - 0.5 || r.bottom > box.bottom + 0.5)
        bad.push('chart ' + (i + 1) + ': "' + t.textContent + '" spans x ' + (r.left - box.left).toFixed(1) + '..' +
                 (r.right - box.left).toFixed(1) + ', y ' + (r.top - box.top).toFixed(1) + '..' +
                 (r.bottom - box.top).toFixed(1) + ' of a ' + box.width.toFixed(0) + ' x ' + box.height.toFixed(0) +
                 ' chart');
    });
  });
  // A browser without fonts draws no text, and nothing would look cut off.
  if (texts > 0 && drawn === 0) bad.push('none of the ' + texts + ' chart texts was drawn (fonts missing?)');
  var out = document.createElement('pre');
  out.id = 'clip-check';
  out.textContent = JSON.stringify(bad);
  document.body.appendChild(out);
})();
"""

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--window-size=1280,800", "--dump-dom"]


def page_of(path):
    text = open(path, encoding="utf-8").read()
    if path.endswith(".svg"):
        text = '<!DOCTYPE html><html><head><meta charset="utf-8"></head><body style="margin:0">' + text + "</body></html>"
    return text.replace("</body>", "<script>" + CHECK + "</script></body>")


def main():
    source = sys.argv[1]
    chromium = shutil.which("chromium")
    if not chromium:
        print("SKIP: chromium is not installed (scripts/test installs Debian's chromium)")
        return 77
    reports = sorted(glob.glob(os.path.join(source, "reports", "*.html")) +
                     glob.glob(os.path.join(source, "reports", "*.svg")))
    if not reports:
        print("FAIL: no report in reports/")
        return 1
    failed = 0
    with tempfile.TemporaryDirectory() as scratch:
        for path in reports:
            page = os.path.join(scratch, os.path.basename(path) + ".html")
            with open(page, "w", encoding="utf-8") as f:
                f.write(page_of(path))
            profile = tempfile.mkdtemp(dir=scratch)
            run = subprocess.run([chromium, *FLAGS, "--user-data-dir=" + profile, "file://" + page],
                                 capture_output=True, text=True, timeout=120)
            found = re.search(r'<pre id="clip-check">(.*?)</pre>', run.stdout, re.S)
            name = os.path.relpath(path, source)
            if not found:
                print(f"FAIL {name}: chromium rendered no result (exit {run.returncode}): {run.stderr[-500:]}")
                failed += 1
                continue
            bad = json.loads(html.unescape(found.group(1)))
            if bad:
                failed += 1
                print(f"FAIL {name}: {len(bad)} text(s) cut off")
                for b in bad[:10]:
                    print("  " + b)
            else:
                print(f"ok {name}")
    print(f"{len(reports) - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
