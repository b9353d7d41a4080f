#!/bin/bash
# imports.sh - the import graph of the built objects: which file of sim/
# calls (or reads) a symbol another file defines.  Between modules the
# arrows go one way (no two modules call each other, directly or round a
# loop); inside a module no files call each other round a loop either.
. "$(dirname "$0")/../lib/cli.sh" "$@"

objects="$(dirname "$bin")/CMakeFiles/heptasim_core.dir/sim"
if [ ! -d "$objects" ] || ! command -v nm > /dev/null; then
  skip "no object files under $objects (or no nm) to read the import graph from"
  summary
fi

python3 - "$objects" > "$tmp/graph" 2>&1 <<'PY'
import os, subprocess, sys

root = sys.argv[1]
defined, used = {}, {}
for module in sorted(os.listdir(root)):
    folder = os.path.join(root, module)
    if not os.path.isdir(folder):
        continue
    for name in sorted(os.listdir(folder)):
        if not name.endswith(".c.o"):
            continue
        node = (module, name[:-len(".c.o")])
        used[node] = set()
        listing = subprocess.run(["nm", os.path.join(folder, name)], capture_output=True, text=True, check=True)
        for line in listing.stdout.splitlines():
            part = line.split()
            if len(part) == 2 and part[0] == "U":
                used[node].add(part[1])
            elif len(part) == 3 and part[1] in "TDBRC":
                defined[part[2]] = node

def loops(graph):
    """The strongly connected parts of more than one node (Tarjan)."""
    index, low, stack, on, found, count = {}, {}, [], set(), [], [0]
    def visit(v):
        index[v] = low[v] = count[0]
        count[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            part = []
            while True:
                w = stack.pop()
                on.discard(w)
                part.append(w)
                if w == v:
                    break
            if len(part) > 1:
                found.append(sorted(part))
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found

files = {node: {defined[s] for s in used[node] if s in defined and defined[s] != node} for node in used}
modules = {}
for (module, _), targets in files.items():
    modules.setdefault(module, set()).update(t[0] for t in targets if t[0] != module)
bad = 0
for part in loops(modules):
    print("modules calling each other round a loop:", " ".join(part))
    bad += 1
for module in sorted(modules):
    inner = {n: {t for t in files[n] if t[0] == module} for n in files if n[0] == module}
    for part in loops(inner):
        print(f"sim/{module}: files calling each other round a loop:", " ".join(f"{n[1]}.c" for n in part))
        bad += 1
print(f"{len(files)} files in {len(modules)} modules, {bad} loops")
sys.exit(1 if bad else 0)
PY
if [ $? -eq 0 ] && grep -q " files in [1-9][0-9]* modules, 0 loops" "$tmp/graph"; then ok; else ko "import graph: $(cat "$tmp/graph")"; fi

summary
