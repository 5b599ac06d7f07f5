#!/usr/bin/env python3
"""Checks the layering rules of docs/ARCHITECTURE.md against the tree.

Every C file belongs to a module (its stem) and every module to a layer. The checker follows
each file's #include "..." lines through include/ transitively and fails when a file reaches a
module its layer must never reach, or when a third-party header is included outside its one
home. With `--objects BUILD_DIR` it also reads the compiled objects (nm) and fails when a
file calls a function, or uses a global, defined by a module its layer must never reach.
Prints TAP; `--list` prints each module's layer and what it reaches.
"""
import os
import re
import subprocess
import sys

# Module stem -> layer. A stem not listed here is an error, so a new module must be placed.
LAYERS = {
    # ground: no knowledge of anything thermlog-specific beyond channel identity
    "log": "ground", "xalloc": "ground", "buf": "ground", "json": "ground", "jsonread": "ground",
    "timefmt": "ground", "channel": "ground", "unit": "ground", "sha256": "ground",
    "codec": "ground",
    # pure models
    "stats": "stats", "runstats": "stats", "lifetime": "lifetime",
    # configuration: the schema over the generic YAML toolkit
    "config": "config", "yamltree": "config",
    # clock state (and the cycle that carries it) and the live snapshot
    "clock": "clock", "cycle": "clock", "live": "live", "capstate": "live",
    "runsummary": "live",
    # sources and the sampler
    "sampler": "sources", "source": "sources", "meminfo": "sources", "counters": "sources",
    # the one SQLite owner
    "store": "store",
    # answers over the store
    "query": "query", "export": "query", "csv": "query", "capwatch": "query",
    "capreplay": "query", "lifetime-report": "query",
    "jobcsv": "query", "runs": "query",
    # http
    "http": "http", "api": "api", "metrics": "api", "web": "api", "session": "api",
    # daemon
    "daemon": "daemon", "main": "daemon", "recorder": "daemon", "notify": "daemon",
    "server": "daemon",
    "demo": "daemon", "demo-yaml": "daemon", "sim": "daemon", "runsock": "daemon",
    # command line
    "cli": "cli", "table": "cli",
}

# layer -> layers it must never reach, directly or through another module (docs/ARCHITECTURE.md).
FORBIDDEN = {
    "ground": {"stats", "lifetime", "config", "clock", "live", "sources", "store", "query",
               "api", "http", "daemon", "cli"},
    "stats": {"config", "clock", "live", "sources", "store", "query", "api", "http", "daemon",
              "cli"},
    "lifetime": {"config", "clock", "live", "sources", "store", "query", "api", "http",
                 "daemon", "cli", "stats"},
    "config": {"clock", "live", "sources", "store", "query", "api", "http", "daemon", "cli"},
    "clock": {"store", "query", "api", "http", "daemon", "cli", "sources", "live"},
    "live": {"store", "query", "api", "http", "daemon", "cli", "sources"},
    "sources": {"store", "query", "api", "http", "daemon", "cli", "live", "clock"},
    "store": {"config", "query", "stats", "api", "http", "daemon", "cli", "sources"},
    "query": {"api", "http", "daemon", "cli", "sources"},
    "api": {"http", "daemon", "cli", "sources"},
    "http": {"daemon", "cli", "sources", "store", "query"},  # data only through api
    "daemon": {"cli"},
    "cli": {"http", "api", "daemon"},
}

# Third-party headers and the one file (path under src/ without .c) allowed to include each.
HOMES = {
    "sqlite3.h": {"store"},
    "yaml.h": {"yamltree"},
    "microhttpd.h": {"http/http"},
    "gnutls/gnutls.h": {"http/http"},
    "sensors/sensors.h": {"sources/hwmon"},
}

INCLUDE_RE = re.compile(r'^\s*#\s*include\s+([<"])([^>"]+)[>"]', re.M)


def module_of(path):
    """The module stem of a file: src/sources/thermal.c -> source (by folder), src/x.c -> x."""
    rel = path.replace(os.sep, "/")
    stem = os.path.splitext(os.path.basename(rel))[0]
    if "/sources/" in rel or stem.startswith("source-") or stem == "source":
        return "source" if stem != "sampler" else "sampler"
    if "/cli/" in rel or stem.startswith("cli-") or stem == "cli":
        return "cli"
    if "/daemon/" in rel and stem not in LAYERS:
        return "daemon"
    if "/http/" in rel and stem not in LAYERS:
        return "http"
    return stem


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
        for dirpath, _, names in os.walk(os.path.join(root, top)):
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
            if s in HOMES and home_id(f, root) not in HOMES[s]:
                problems.append(f"{os.path.relpath(f, root)}: includes <{s}>, whose one home is "
                                f"{'/'.join(sorted(HOMES[s]))}")

    def closure(f, seen=None):
        seen = set() if seen is None else seen
        for h in direct.get(f, []):
            if h not in seen:
                seen.add(h)
                closure(h, seen)
        return seen

    checks = 0
    for f in files:
        mod = module_of(f)
        rel = os.path.relpath(f, root)
        if mod not in LAYERS:
            problems.append(f"{rel}: module '{mod}' has no layer in scripts/check-architecture.py")
            continue
        layer = LAYERS[mod]
        reached = closure(f)
        if listing:
            mods = sorted({module_of(h) for h in reached})
            print(f"# {rel} [{layer}] -> {' '.join(mods)}")
        for h in sorted(reached):
            hmod = module_of(h)
            hlayer = LAYERS.get(hmod)
            checks += 1
            if hlayer and hlayer != layer and hlayer in FORBIDDEN.get(layer, set()):
                path = " -> ".join(os.path.basename(x) for x in chain(f, h, direct))
                problems.append(f"{rel} [{layer}] reaches {os.path.basename(h)} [{hlayer}]: "
                                f"{path}")

    rule_problems = [p for p in problems if "reaches" in p or "no layer" in p]
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


def object_source(name):
    """meson's object name to its source: daemon_main.c.o -> src/daemon/main.c."""
    stem = name[:-len(".c.o")]
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
    for target in ("libcore.a.p", "thermlog.p", "thermlogd.p"):
        d = os.path.join(build, "src", target)
        if os.path.isdir(d):
            objects += [os.path.join(d, n) for n in sorted(os.listdir(d)) if n.endswith(".c.o")]
    owner = {}
    for o in objects:
        src = object_source(os.path.basename(o))
        defined = nm_symbols(o, "--defined-only")
        if defined is None:
            return None, []  # a foreign architecture's objects (a cross build): not checked
        for sym in defined:
            owner[sym] = src
    problems = []
    for o in objects:
        src = object_source(os.path.basename(o))
        layer = LAYERS.get(module_of(src))
        for sym in sorted(nm_symbols(o, "-u") or ()):
            if sym not in owner or layer is None:
                continue
            other = LAYERS.get(module_of(owner[sym]))
            if other and other != layer and other in FORBIDDEN.get(layer, set()):
                problems.append(f"{src} [{layer}] uses {sym} of {owner[sym]} [{other}]")
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
