#!/usr/bin/env python3
"""Checks the layering rules of docs/ARCHITECTURE.md against the tree.

A file's layer is its folder (src/<layer>/), a header in include/ takes the layer of the module
of its name, and a file in no layer is an error. The checker follows
each file's #include "..." lines through include/ transitively and fails when a file reaches a
module its layer must never reach, or when a third-party header is included outside its one
home. With `--objects BUILD_DIR` it also reads the compiled objects (nm) and fails when a
file calls a function, or uses a global, defined by a module its layer must never reach.
Prints TAP; `--list` prints each module's layer and what it reaches.
"""
import fnmatch
import os
import re
import subprocess
import sys

# A file's layer is its folder: src/<layer>/... A header in include/ takes the layer of the
# module of its name (src/<layer>/<m>.c); the contracts that are types alone are placed here.
# src/cli/ is one file per command (config.c, runs.c, ...): no header is named after those.
# A file outside a layer folder, or a header with no place, is an error.
HEADER_LAYERS = {"source": "sources", "cycle": "state", "capstate": "state",
                 "runsummary": "state", "cli": "cli", "cli-output": "cli", "cli-stats": "cli",
                 "table": "cli"}

# layer -> layers it must never reach, directly or through another module (docs/ARCHITECTURE.md).
# Every folder of src/ must have an entry.
FORBIDDEN = {
    "base": {"model", "config", "state", "sources", "store", "query", "runs", "report",
             "http", "daemon", "cli"},
    "model": {"config", "state", "sources", "store", "query", "runs", "report", "http", "daemon",
              "cli"},
    "config": {"state", "sources", "store", "query", "runs", "report", "http", "daemon", "cli"},
    "state": {"store", "query", "runs", "report", "http", "daemon", "cli", "sources"},
    "sources": {"store", "query", "runs", "report", "http", "daemon", "cli", "state"},
    "store": {"config", "query", "runs", "report", "http", "daemon", "cli", "sources"},
    "query": {"report", "http", "daemon", "cli", "sources"},
    "runs": {"report", "http", "daemon", "cli", "sources"},
    # a report lays out the answers of query, runs and lifetime-report; no layer below uses it
    "report": {"http", "daemon", "cli", "sources"},
    "http": {"daemon", "cli", "sources"},
    "daemon": {"cli"},
    "cli": {"http", "daemon"},
}

# Narrower rules inside the layers: files (layer/module, fnmatch) and what they never reach.
NARROWER = [
    ("model/lifetime", {"model/stats", "model/runstats"}),
    ("store/*", {"model/stats", "model/runstats"}),
    ("state/clock", {"state/live", "state/capstate", "state/runsummary"}),
    ("state/cycle", {"state/live", "state/capstate", "state/runsummary"}),
    ("http/http", {"store/*", "query/*", "runs/*"}),  # data only through api
    ("http/*", {"http/http"}),  # api, metrics, web, session know no libmicrohttpd
]

# Third-party headers and the one file (path under src/ without .c, fnmatch) allowed to include
# each: the store's files include <sqlite3.h> through their private header.
HOMES = {
    "sqlite3.h": {"store/store-internal"},
    "yaml.h": {"config/yamltree"},
    "microhttpd.h": {"http/http"},
    "gnutls/gnutls.h": {"http/http"},
    "sensors/sensors.h": {"sources/hwmon"},
}

INCLUDE_RE = re.compile(r'^\s*#\s*include\s+([<"])([^>"]+)[>"]', re.M)


MODULE_LAYER = {}  # module stem -> layer, filled from src/<layer>/<m>.c by main()


def layer_of(path):
    """src/store/store.c -> store; include/store.h -> store (where store.c lives); else None."""
    rel = path.replace(os.sep, "/")
    stem = os.path.splitext(os.path.basename(rel))[0]
    parts = rel.split("/")
    if "src" in parts:
        i = len(parts) - 1 - parts[::-1].index("src")
        if len(parts) - i > 2:
            return parts[i + 1] if parts[i + 1] in FORBIDDEN else None
        return None
    return MODULE_LAYER.get(stem) or HEADER_LAYERS.get(stem)


def module_id(path):
    """layer/stem, the name the narrower rules use: include/http.h -> http/http."""
    stem = os.path.splitext(os.path.basename(path))[0]
    return f"{layer_of(path)}/{stem}"


def never(f, h):
    """The layer or narrower rule that f reaching h breaks, or None."""
    layer, hlayer = layer_of(f), layer_of(h)
    if hlayer != layer and hlayer in FORBIDDEN.get(layer, set()):
        return hlayer
    fid, hid = module_id(f), module_id(h)
    if fid == hid:
        return None
    for pattern, targets in NARROWER:
        if fnmatch.fnmatchcase(fid, pattern) and any(fnmatch.fnmatchcase(hid, t) for t in targets):
            return hid
    return None


def home_id(path, root):
    """src/sources/hwmon.c -> sources/hwmon; include/x.h -> include/x (never a home)."""
    rel = os.path.relpath(path, root).replace(os.sep, "/")
    rel = os.path.splitext(rel)[0]
    return rel[len("src/"):] if rel.startswith("src/") else rel


def read_includes(path):
    with open(path, encoding="utf-8") as f:
        text = f.read()
    local, system = [], []
    for kind, name in INCLUDE_RE.findall(text):
        (local if kind == '"' else system).append(name)
    return local, system


def main():
    root = sys.argv[1] if len(sys.argv) > 1 and not sys.argv[1].startswith("-") else "."
    listing = "--list" in sys.argv
    inc_dir = os.path.join(root, "include")
    files = []
    for top in ("src", "include"):
        for dirpath, dirs, names in os.walk(os.path.join(root, top)):
            # src/fence/: the #error stand-ins for third-party headers outside their homes
            dirs[:] = [d for d in dirs if not (top == "src" and d == "fence")]
            for n in sorted(names):
                if n.endswith((".c", ".h")):
                    files.append(os.path.join(dirpath, n))
    headers = {os.path.basename(f): f for f in files if f.endswith(".h")}

    direct = {}
    problems = []
    for f in files:
        local, system = read_includes(f)
        direct[f] = [headers[h] for h in (os.path.basename(x) for x in local) if h in headers]
        for s in system:
            if s in HOMES and not any(fnmatch.fnmatchcase(home_id(f, root), h) for h in HOMES[s]):
                problems.append(f"{os.path.relpath(f, root)}: includes <{s}>, whose one home is "
                                f"{'/'.join(sorted(HOMES[s]))}")

    def closure(f, seen=None):
        seen = set() if seen is None else seen
        for h in direct.get(f, []):
            if h not in seen:
                seen.add(h)
                closure(h, seen)
        return seen

    for f in files:
        rel = os.path.relpath(f, root).replace(os.sep, "/")
        if rel.startswith("src/") and f.endswith(".c") and layer_of(rel) not in (None, "cli"):
            MODULE_LAYER.setdefault(os.path.splitext(os.path.basename(f))[0], layer_of(rel))
    src_dir = os.path.join(root, "src")
    for d in sorted(os.listdir(src_dir)):
        if os.path.isdir(os.path.join(src_dir, d)) and d != "fence" and d not in FORBIDDEN:
            problems.append(f"src/{d}/: a folder with no rules in scripts/check-architecture.py")
    checks = 0
    for f in files:
        rel = os.path.relpath(f, root)
        layer = layer_of(rel)
        if layer is None:
            problems.append(f"{rel}: in no layer (a module lives in src/<layer>/; a header in "
                            "include/ needs its module or a place in HEADER_LAYERS)")
            continue
        reached = closure(f)
        if listing:
            mods = sorted({module_id(os.path.relpath(h, root)) for h in reached})
            print(f"# {rel} [{layer}] -> {' '.join(mods)}")
        for h in sorted(reached):
            checks += 1
            broken = never(rel, os.path.relpath(h, root))
            if broken:
                path = " -> ".join(os.path.basename(x) for x in chain(f, h, direct))
                problems.append(f"{rel} [{layer}] reaches {os.path.basename(h)} [{broken}]: "
                                f"{path}")

    rule_problems = [p for p in problems if "reaches" in p or "no layer" in p or "no rules" in p]
    home_problems = [p for p in problems if p not in rule_problems]
    results = [(f"layering rules ({len(files)} files)", rule_problems),
               (f"third-party header homes ({len(files)} files)", home_problems)]
    if "--objects" in sys.argv:
        objects, call_problems = check_calls(sys.argv[sys.argv.index("--objects") + 1])
        if objects is None:
            results.append(("calls and globals respect the layers # SKIP nm cannot read the "
                            "objects", []))
        else:
            if not objects:
                call_problems = ["no objects found under the build directory's src/"]
            results.append((f"calls and globals respect the layers ({len(objects)} objects)",
                            call_problems))
            problems += call_problems
    print("TAP version 13")
    print(f"1..{len(results)}")
    for i, (name, ps) in enumerate(results, 1):
        print(("ok" if not ps else "not ok") + f" {i} - {name}")
        for p in ps:
            print(f"#   {p}")
    return 1 if problems else 0


FOLDERS = ("sources", "http", "daemon", "cli")


def object_source(path):
    """meson's object to its source: thermlogd.p/daemon_main.c.o -> src/daemon/main.c,
    store/libstore.a.p/store.c.o -> src/store/store.c."""
    name = os.path.basename(path)
    stem = name[:-len(".c.o")]
    parent = os.path.basename(os.path.dirname(path))
    if parent.startswith("lib") and parent.endswith(".a.p"):
        return f"src/{parent[3:-4]}/{stem}.c"
    for folder in FOLDERS:
        if stem.startswith(folder + "_"):
            return f"src/{folder}/{stem[len(folder) + 1:]}.c"
    return f"src/{stem}.c"


def nm_symbols(path, flag):
    """Global symbols of an object (defined, or with -u used); None when nm cannot read it."""
    r = subprocess.run(["nm", flag, path], capture_output=True, text=True)
    if r.returncode != 0:
        return None
    out = r.stdout
    syms = set()
    for line in out.splitlines():
        parts = line.split()
        if flag == "-u" and parts:
            syms.add(parts[-1])
        elif len(parts) == 3 and parts[1] in "TDBR":
            syms.add(parts[2])
    return syms


def check_calls(build):
    """Problems where an object uses a symbol of a module its layer must never reach."""
    objects = []
    dirs = [os.path.join(build, "src", t) for t in ("thermlog.p", "thermlogd.p")]
    src_build = os.path.join(build, "src")
    for folder in sorted(os.listdir(src_build)) if os.path.isdir(src_build) else []:
        dirs.append(os.path.join(src_build, folder, f"lib{folder}.a.p"))
    for d in dirs:
        if os.path.isdir(d):
            objects += [os.path.join(d, n) for n in sorted(os.listdir(d)) if n.endswith(".c.o")
                        and not n.startswith("meson-generated_")]
    owner = {}
    for o in objects:
        src = object_source(o)
        defined = nm_symbols(o, "--defined-only")
        if defined is None:
            return None, []  # a foreign architecture's objects (a cross build): not checked
        for sym in defined:
            owner[sym] = src
    problems = []
    for o in objects:
        src = object_source(o)
        layer = layer_of(src)
        for sym in sorted(nm_symbols(o, "-u") or ()):
            if sym not in owner or layer is None:
                continue
            broken = never(src, owner[sym])
            if broken:
                problems.append(f"{src} [{layer}] uses {sym} of {owner[sym]} [{broken}]")
    return objects, problems


def chain(src, dst, direct):
    """One include path from src to dst, for the message."""
    prev = {src: None}
    queue = [src]
    while queue:
        cur = queue.pop(0)
        if cur == dst:
            break
        for nxt in direct.get(cur, []):
            if nxt not in prev:
                prev[nxt] = cur
                queue.append(nxt)
    path, cur = [], dst
    while cur is not None:
        path.append(cur)
        cur = prev.get(cur)
    return list(reversed(path))


if __name__ == "__main__":
    sys.exit(main())
