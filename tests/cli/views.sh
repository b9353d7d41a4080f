#!/usr/bin/env bash
# views.sh - `run --trace` and `run --report` end to end: the trace is a
# trace-event file with the expected processes and threads and no
# overlapping slices on a track, the HTML report is well-formed (each SVG
# parses as XML) and self-contained, bad --trace-ranks lists are rejected,
# and, when Chromium is installed, the report renders to a PNG that is not
# blank.  Checks that need python3 or chromium are skipped without them.
. "$(dirname "$0")/../lib/cli.sh" "$@"

# 16 devices, 4 stages, 4 layers: a step simulates in well under a second.
small=(-m gpt-7.5b -p dgx-h100 -s gpt3-175b-a100 --devices 16 --set model.layers=4 --set tp_x=2 --set pp=4 --set dp=2
       --set vpp=1 --set schedule=1f1b --set global_batch=16 --set micro_batch=1 -q)

have_py=0
if command -v python3 >/dev/null 2>&1 && python3 -c 'import json, xml.etree.ElementTree, zlib' 2>/dev/null; then
  have_py=1
fi

# check_trace FILE PROCESSES: valid trace-event JSON, PROCESSES processes,
# each with a main track, named streams, no overlap on any track.
check_trace() {
  python3 - "$1" "$2" <<'EOF'
import json, sys, collections
doc = json.load(open(sys.argv[1]))
want = int(sys.argv[2])
ev = doc["traceEvents"]
procs = {e["pid"]: e["args"]["name"] for e in ev if e["ph"] == "M" and e["name"] == "process_name"}
threads = {(e["pid"], e["tid"]): e["args"]["name"] for e in ev if e["ph"] == "M" and e["name"] == "thread_name"}
assert len(procs) == want, f"{len(procs)} processes, want {want}"
for pid, name in procs.items():
    assert name.startswith(f"rank {pid - 1} (stage "), name
    assert threads.get((pid, 1)) == "main (compute)", f"pid {pid} has no main track"
assert set(threads.values()) <= {"main (compute)", "tp stream", "cp stream", "ep stream", "dp stream"}, threads
tracks = collections.defaultdict(list)
for e in ev:
    if e["ph"] == "X":
        assert e["dur"] > 0 and e["ts"] >= 0, e
        assert (e["pid"], e["tid"]) in threads, e
        tracks[(e["pid"], e["tid"])].append((round(e["ts"] * 1000), round((e["ts"] + e["dur"]) * 1000)))
    elif e["ph"] not in ("M", "i"):
        raise AssertionError(f"unexpected phase {e['ph']}")
assert tracks, "no slices"
for k, v in tracks.items():
    v.sort()
    for a, b in zip(v, v[1:]):
        assert b[0] >= a[1], f"track {k}: slice at {b[0]} ns overlaps one ending at {a[1]} ns"
names = [e["name"] for e in ev if e["ph"] == "X"]
assert any(n.endswith(" fwd") for n in names) and any(n.endswith(" bwd") for n in names), "no fwd/bwd slices"
assert any(" mb" in n for n in names) and any(" L" in n for n in names), "slices lack layer/micro-batch"
EOF
}

# check_html FILE SECTION...: every <svg> parses as XML, the sections are
# there, nothing is loaded from elsewhere.
check_html() {
  python3 - "$@" <<'EOF'
import re, sys, xml.etree.ElementTree as ET
path, sections = sys.argv[1], sys.argv[2:]
html = open(path, encoding="utf-8").read()
assert html.startswith("<!DOCTYPE html>"), "no doctype"
svgs = re.findall(r"<svg\b.*?</svg>", html, re.S)
assert svgs, "no svg"
for s in svgs:
    ET.fromstring(s)
for s in sections:
    assert f'id="{s}"' in html, f"no section {s}"
for bad in ("<script", "<link", " src=", " href=", "@import"):
    assert bad not in html, f"found {bad}"
assert html.count("http") == html.count('xmlns="http://www.w3.org/2000/svg"'), "external URL"
body = re.sub(r"<svg\b.*?</svg>", "", html, flags=re.S)
stack = []
for m in re.finditer(r"<(/?)([a-z0-9]+)[^>]*?(/?)>", body):
    close, name, selfclose = m.groups()
    if name == "meta" or selfclose:
        continue
    if close:
        assert stack and stack[-1] == name, f"</{name}> closes {stack[-1:]}"
        stack.pop()
    else:
        stack.append(name)
assert not stack, f"unclosed {stack}"
EOF
}

# png_not_blank FILE: decodes the PNG and requires several colours and
# some non-white pixels.
png_not_blank() {
  python3 - "$1" <<'EOF'
import struct, sys, zlib
data = open(sys.argv[1], "rb").read()
assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
pos, idat = 8, b""
while pos < len(data):
    n, kind = struct.unpack(">I4s", data[pos:pos + 8])
    body = data[pos + 8:pos + 8 + n]
    if kind == b"IHDR":
        w, h, depth, ctype = struct.unpack(">IIBB", body[:10])
    elif kind == b"IDAT":
        idat += body
    pos += 12 + n
assert depth == 8 and ctype in (2, 6), f"unexpected PNG format {depth}/{ctype}"
bpp = 3 if ctype == 2 else 4
raw, stride = zlib.decompress(idat), w * bpp
prev, colours, ink = bytearray(stride), set(), 0
for y in range(h):
    f, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
    for i in range(stride):
        a = line[i - bpp] if i >= bpp else 0
        b, c = prev[i], prev[i - bpp] if i >= bpp else 0
        if f == 1: line[i] = (line[i] + a) & 255
        elif f == 2: line[i] = (line[i] + b) & 255
        elif f == 3: line[i] = (line[i] + (a + b) // 2) & 255
        elif f == 4:
            p = a + b - c
            pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
            line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
    prev = line
    for x in range(0, stride, bpp * 4):
        px = bytes(line[x:x + 3])
        colours.add(px)
        ink += px != b"\xff\xff\xff"
share = ink / (h * ((w + 3) // 4))
assert len(colours) >= 8, f"only {len(colours)} colours"
assert share > 0.02, f"only {share:.1%} of the page is not white"
print(f"{w}x{h}, {len(colours)} colours, {share:.0%} inked")
EOF
}

# --- a traced and reported step -------------------------------------------
if capture "$bin" run "${small[@]}" --trace "$tmp/trace.json" --report "$tmp/report.html"; then
  ok
else
  ko "run --trace --report failed: $(cat "$tmp/err")"
fi
[ -s "$tmp/trace.json" ] && ok || ko "no trace written"
[ -s "$tmp/report.html" ] && ok || ko "no report written"

if [ $have_py = 1 ]; then
  # default: one rank per stage
  if msg=$(check_trace "$tmp/trace.json" 4 2>&1); then ok; else ko "default trace: $msg"; fi
  if msg=$(check_html "$tmp/report.html" summary timeline breakdown memory communication 2>&1); then ok
  else ko "report: $msg"; fi
  "$bin" run "${small[@]}" --trace "$tmp/all.json" --trace-ranks all 2>"$tmp/err" || ko "--trace-ranks all: $(cat "$tmp/err")"
  if msg=$(check_trace "$tmp/all.json" 16 2>&1); then ok; else ko "all ranks: $msg"; fi
  "$bin" run "${small[@]}" --trace "$tmp/some.json" --trace-ranks 1,4-6 2>"$tmp/err" || ko "--trace-ranks 1,4-6: $(cat "$tmp/err")"
  if msg=$(check_trace "$tmp/some.json" 4 2>&1); then ok; else ko "ranks 1,4-6: $msg"; fi
else
  skip "trace and HTML structure (no python3)"
fi

# --- bad lists and unwritable files ----------------------------------------
expect 2 "--trace-ranks: '16' is outside the ranks 0-15" -- run "${small[@]}" --trace "$tmp/x.json" --trace-ranks 0,16
expect 2 "--trace-ranks: 'a-b' is not a rank or a range" -- run "${small[@]}" --trace "$tmp/x.json" --trace-ranks a-b
expect 2 "'--trace-ranks' needs '--trace FILE'" -- run "${small[@]}" --trace-ranks all
expect 1 "no-such-dir/t.json: cannot write the trace" -- run "${small[@]}" --trace "$tmp/no-such-dir/t.json"
expect 1 "no-such-dir/r.html: cannot write the HTML report" -- run "${small[@]}" --report "$tmp/no-such-dir/r.html"

# A strategy that does not fit is not simulated, but its report shows why.
expect 1 "does not fit" -- run "${small[@]}" --set model.layers=40 --set recompute=none --set zero=0 \
  --set model.seq_len=16384 --set pp=2 --set dp=4 --report "$tmp/oom.html"
if grep -q "DOES NOT FIT" "$tmp/oom.html" 2>/dev/null && ! grep -q 'id="timeline"' "$tmp/oom.html"; then ok
else ko "the out-of-memory report lacks its verdict"; fi

# --- rendering ------------------------------------------------------------
chromium=""
for c in /usr/bin/chromium /usr/bin/chromium-browser; do [ -x "$c" ] && chromium=$c && break; done
if [ -n "$chromium" ] && [ $have_py = 1 ]; then
  profile=$(mktemp -d)
  timeout 180 "$chromium" --headless --no-sandbox --disable-gpu --disable-background-networking \
    --disable-component-update --disable-sync --no-first-run --user-data-dir="$profile" --hide-scrollbars \
    --window-size=1280,1600 --screenshot="$tmp/report.png" "file://$tmp/report.html" >"$tmp/chromium.log" 2>&1
  rm -rf "$profile"
  if [ ! -s "$tmp/report.png" ]; then
    ko "chromium wrote no screenshot: $(tail -2 "$tmp/chromium.log")"
  elif msg=$(png_not_blank "$tmp/report.png" 2>&1); then
    echo "screenshot: $msg"; ok
  else
    ko "blank screenshot: $msg"
  fi
else
  skip "screenshot (needs /usr/bin/chromium and python3)"
fi

summary
