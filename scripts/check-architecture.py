#!/usr/bin/env python3
"""Checks the layering rules of src/layers against the tree.

A file's layer is its folder (src/<layer>/; a module's header lives beside its code), and a
file in no layer is an error. src/layers says which layers each layer reaches; the checker
follows each file's #include "..." lines transitively and fails when a file reaches a layer
its own does not, breaks a narrower rule, includes a folder's private header from outside it,
or includes a third-party header outside its one home. It also checks src/layers itself (each
layer reaches only layers above it in the file, and what those reach) and that the table of
docs/ARCHITECTURE.md says the same. With `--objects BUILD_DIR` it reads the compiled objects
(nm) and fails when a file calls a function, or uses a global, of a layer it does not reach;
with `--fence BUILD_DIR` it preprocesses, with each folder's own compile command, one header of
every other layer: a reached one must compile, any other must stop with the rule's words.
It also checks the size rules: no .c in src/ over 1,500 lines, no function over 150.
Prints TAP; `--list` prints each file's layer and what it reaches.
"""
import fnmatch
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src"))
import layers  # noqa: E402  src/layers.py: the one reader of src/layers

INCLUDE_RE = re.compile(r'^\s*#\s*include\s+([<"])([^>"]+)[>"]', re.M)

REACH = {}  # layer -> layers it reaches (src/layers)
NARROWER = []  # (files pattern, [patterns they never reach])
PRIVATE = []  # header patterns private to their folder
HOMES = {}  # third-party header -> its one home (layer/module)
ACYCLIC = []  # layers whose files reach each other without a circle


def load_rules(root):
    reach, never, private, libraries, acyclic = layers.parse(os.path.join(root, "src", "layers"))
    REACH.update({k: set(v) for k, v in reach.items()})
    NARROWER.extend(never)
    PRIVATE.extend(private)
    HOMES.update({h: home for h, (_, home) in libraries.items()})
    ACYCLIC.extend(acyclic)
    return list(reach)


def layer_of(path):
    """src/store/store.c -> store; a file outside src/<layer>/ -> None."""
    parts = path.replace(os.sep, "/").split("/")
    if "src" in parts:
        i = len(parts) - 1 - parts[::-1].index("src")
        if len(parts) - i == 3 and parts[i + 1] in REACH:
            return parts[i + 1]
    return None


def module_id(path):
    """layer/stem, the name the narrower rules use: src/http/http.h -> http/http."""
    stem = os.path.splitext(os.path.basename(path))[0]
    return f"{layer_of(path)}/{stem}"


def never(f, h):
    """The rule that f reaching h breaks, as words, or None."""
    layer, hlayer = layer_of(f), layer_of(h)
    if hlayer != layer and hlayer not in REACH.get(layer, set()):
        return f"{layer} does not reach {hlayer}"
    if hlayer != layer and any(fnmatch.fnmatchcase(os.path.basename(h), p) for p in PRIVATE):
        return f"{os.path.basename(h)} is private to src/{hlayer}/"
    fid, hid = module_id(f), module_id(h)
    if fid == hid:
        return None
    for pattern, targets in NARROWER:
        if fnmatch.fnmatchcase(fid, pattern) and any(fnmatch.fnmatchcase(hid, t) for t in targets):
            return f"never {pattern}: {hid}"
    return None


def rule_problems(order):
    """src/layers itself: a layer reaches only layers above it and what they reach."""
    problems = []
    for i, layer in enumerate(order):
        for other in sorted(REACH[layer]):
            if other not in REACH:
                problems.append(f"src/layers: {layer} reaches {other}, which is no layer")
            elif order.index(other) >= i:
                problems.append(f"src/layers: {layer} reaches {other}, which is not below it")
            else:
                missing = REACH[other] - REACH[layer]
                if missing:
                    problems.append(f"src/layers: {layer} reaches {other} but not what {other} "
                                    f"reaches: {' '.join(sorted(missing))}")
    return problems


def table_problems(root, order):
    """docs/ARCHITECTURE.md's layer table: a row per layer, its 'reaches' cell as src/layers."""
    path = os.path.join(root, "docs", "ARCHITECTURE.md")
    rows = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if line.startswith("|") and len(cells) >= 3 and cells[0] in REACH:
                rows[cells[0]] = set(cells[-1].replace("`", "").replace(",", " ").split()) - {"-",
                                                                                              "—"}
    problems = []
    for layer in order:
        if layer not in rows:
            problems.append(f"docs/ARCHITECTURE.md: no row for the layer {layer}")
        elif rows[layer] != REACH[layer]:
            problems.append(f"docs/ARCHITECTURE.md: {layer} reaches {' '.join(sorted(rows[layer])) or 'nothing'}"
                            f", src/layers says {' '.join(sorted(REACH[layer])) or 'nothing'}")
    return problems


def home_id(path, root):
    """src/sources/hwmon.c -> sources/hwmon."""
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
    order = load_rules(root)
    files, problems = [], []
    for dirpath, dirs, names in os.walk(os.path.join(root, "src")):
        for n in sorted(names):
            if n.endswith((".c", ".h")):
                files.append(os.path.join(dirpath, n))
    headers = {}
    for f in files:
        if f.endswith(".h"):
            name = os.path.basename(f)
            if name in headers:
                problems.append(f"{os.path.relpath(f, root)}: a second header named {name} "
                                f"(the first is {os.path.relpath(headers[name], root)})")
            headers[name] = f

    direct = {}
    home_problems = []
    for f in files:
        local, system = read_includes(f)
        direct[f] = [headers[h] for h in (os.path.basename(x) for x in local) if h in headers]
        for s in system:
            if s in HOMES and not fnmatch.fnmatchcase(home_id(f, root), HOMES[s]):
                home_problems.append(f"{os.path.relpath(f, root)}: includes <{s}>, whose one "
                                     f"home is {HOMES[s]}")

    def closure(f, seen=None):
        seen = set() if seen is None else seen
        for h in direct.get(f, []):
            if h not in seen:
                seen.add(h)
                closure(h, seen)
        return seen

    src_dir = os.path.join(root, "src")
    for d in sorted(os.listdir(src_dir)):
        if os.path.isdir(os.path.join(src_dir, d)) and d not in REACH:
            problems.append(f"src/{d}/: a folder that is no layer of src/layers")
    for f in files:
        rel = os.path.relpath(f, root)
        layer = layer_of(rel)
        if layer is None:
            problems.append(f"{rel}: in no layer (a module and its header live in src/<layer>/)")
            continue
        reached = closure(f)
        if listing:
            mods = sorted({module_id(os.path.relpath(h, root)) for h in reached})
            print(f"# {rel} [{layer}] -> {' '.join(mods)}")
        for h in sorted(reached):
            broken = never(rel, os.path.relpath(h, root))
            if broken:
                path = " -> ".join(os.path.basename(x) for x in chain(f, h, direct))
                problems.append(f"{rel} [{layer}] reaches {os.path.basename(h)} ({broken}): "
                                f"{path}")

    results = [("src/layers: each layer reaches only layers below it, and what they reach",
                rule_problems(order)),
               ("docs/ARCHITECTURE.md's layer table says what src/layers says",
                table_problems(root, order)),
               (f"layering rules ({len(files)} files)", problems),
               (f"third-party header homes ({len(files)} files)", home_problems),
               size_problems(root, files)]
    if "--objects" in sys.argv:
        objects, call_problems, uses = check_calls(sys.argv[sys.argv.index("--objects") + 1])
        if objects is None:
            results.append(("calls and globals respect the layers # SKIP nm cannot read the "
                            "objects", []))
        else:
            if not objects:
                call_problems = ["no objects found under the build directory's src/"]
            results.append((f"calls and globals respect the layers ({len(objects)} objects)",
                            call_problems))
            results.append(check_circles(root, files, direct, uses))
    if "--fence" in sys.argv:
        results += check_fence(root, sys.argv[sys.argv.index("--fence") + 1], order, headers)
    print("TAP version 13")
    print(f"1..{len(results)}")
    failed = False
    for i, (name, ps) in enumerate(results, 1):
        skip = "# SKIP" in name
        print(("ok" if not ps or skip else "not ok") + f" {i} - {name}")
        failed |= bool(ps) and not skip
        for p in ps:
            print(f"#   {p}")
    return 1 if failed else 0


MAX_FILE_LINES = 1500  # a .c over this is doing two jobs
MAX_FUNCTION_LINES = 150
FUNCTION_START = re.compile(r"^[A-Za-z_][^;=]*\(")


def function_lengths(text):
    """(name, first line, lines) of each function defined in clang-formatted C text: a
    signature from column 0 to the line ending in '{', the body to the '}' in column 0."""
    lines = text.split("\n")
    out, i = [], 0
    while i < len(lines):
        line = lines[i]
        if FUNCTION_START.match(line) and not line.startswith(("struct ", "enum ", "union ",
                                                               "typedef ")) \
                or re.match(r"^(static )?(const )?(struct|enum|union) \w+ \**\w+\(", line):
            j = i
            while j < len(lines) and not lines[j].rstrip().endswith(("{", ";")):
                j += 1
            if j < len(lines) and lines[j].rstrip().endswith("{"):
                k = j + 1
                while k < len(lines) and lines[k] != "}":
                    k += 1
                name = re.search(r"(\w+)\s*\(", line)
                out.append((name.group(1) if name else "?", i + 1, k - i + 1))
                i = k
        i += 1
    return out


def size_problems(root, files):
    """The project's size rules: no .c over MAX_FILE_LINES lines, no function over
    MAX_FUNCTION_LINES (signature to closing brace)."""
    problems, n = [], 0
    for f in files:
        if not f.endswith(".c"):
            continue
        with open(f, encoding="utf-8") as fh:
            text = fh.read()
        rel = os.path.relpath(f, root)
        n_lines = text.count("\n")
        if n_lines > MAX_FILE_LINES:
            problems.append(f"{rel}: {n_lines} lines, over {MAX_FILE_LINES}")
        for name, first, length in function_lengths(text):
            n += 1
            if length > MAX_FUNCTION_LINES:
                problems.append(f"{rel}:{first}: {name}() is {length} lines, over "
                                f"{MAX_FUNCTION_LINES}")
    return (f"no .c over {MAX_FILE_LINES} lines, no function over {MAX_FUNCTION_LINES} "
            f"({n} functions)", problems)


def preprocess_argv(cmd):
    """A compile command without its source, output and dependency file, plain diagnostics."""
    argv = shlex.split(cmd["command"]) if "command" in cmd else list(cmd["arguments"])
    out, skip = [], False
    for a in argv:
        if skip:
            skip = False
        elif a in ("-o", "-MQ", "-MF", "-MT"):
            skip = True
        elif a not in ("-c", "-MD", cmd["file"]) and not a.startswith("-fdiagnostics-color"):
            out.append(a)
    return out + ["-fdiagnostics-color=never"]


def check_fence(root, build, order, headers):
    """Preprocesses, with a compile command of each folder, an include of one header of every
    layer (and of each third-party header): those of a reached layer (and of the folder's own
    library) must pass, the others must fail with src/layers in the message."""
    try:
        with open(os.path.join(build, "compile_commands.json"), encoding="utf-8") as f:
            commands = json.load(f)
    except OSError as e:
        return [(f"the compiler refuses what a folder does not reach # SKIP {e.strerror}", [])]
    one = {}  # layer -> a header of it
    for name, path in sorted(headers.items()):
        layer = layer_of(os.path.relpath(path, root))
        if layer and not any(fnmatch.fnmatchcase(name, p) for p in PRIVATE):
            one.setdefault(layer, name)
    problems, tried = [], 0
    with tempfile.TemporaryDirectory() as tmp:
        for layer in order:
            cmd = next((c for c in commands
                        if layer_of(os.path.relpath(os.path.join(c["directory"], c["file"]), root))
                        == layer and "fuzz" not in c["output"] and "/tests/" not in c["file"]
                        and "bench/" not in c["file"]), None)
            if cmd is None:
                problems.append(f"src/{layer}/: no compile command in {build}")
                continue
            wants = {h: other == layer or other in REACH[layer] for other, h in one.items()}
            for h, home in HOMES.items():
                wants[h] = home.split("/")[0] == layer
            for h, allowed in sorted(wants.items()):
                probe = os.path.join(tmp, f"{layer}-{h.replace('/', '-')}.c")
                with open(probe, "w", encoding="utf-8") as f:
                    f.write(f'#include "{h}"\n' if h in headers else f"#include <{h}>\n")
                argv = preprocess_argv(cmd)
                r = subprocess.run(argv + ["-E", "-o", os.devnull, probe], cwd=cmd["directory"],
                                   capture_output=True, text=True)
                tried += 1
                if allowed and r.returncode != 0:
                    problems.append(f"src/{layer}/ cannot include {h}: {r.stderr.strip()[:200]}")
                elif not allowed and (r.returncode == 0 or "src/layers" not in r.stderr):
                    problems.append(f"src/{layer}/ includes {h} without the rule's error")
    return [(f"the compiler refuses what a folder does not reach, naming the rule ({tried} "
             "includes)", problems)]


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
    """Problems where an object uses a symbol of a module its layer must never reach, and
    which file's symbols each file uses ({src: {src of a symbol used}})."""
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
            return None, [], {}  # a foreign architecture's objects (a cross build): not checked
        for sym in defined:
            owner[sym] = src
    problems, uses = [], {}
    for o in objects:
        src = object_source(o)
        layer = layer_of(src)
        for sym in sorted(nm_symbols(o, "-u") or ()):
            if sym not in owner or layer is None:
                continue
            uses.setdefault(src, set()).add(owner[sym])
            broken = never(src, owner[sym])
            if broken:
                problems.append(f"{src} [{layer}] uses {sym} of {owner[sym]} [{broken}]")
    return objects, problems, uses


def check_circles(root, files, direct, uses):
    """For each layer named 'acyclic' in src/layers: no circle among its files, drawn from the
    symbols each object uses and the headers each file includes (a header stands for the .c
    beside it of the same name; a private header for none)."""
    edges = {}
    sources = {os.path.relpath(f, root) for f in files if f.endswith(".c")}
    for f, hs in direct.items():
        rel = os.path.relpath(f, root)
        for h in hs:
            c = os.path.relpath(h, root)[:-2] + ".c"
            if c in sources and c != rel:
                edges.setdefault(rel, set()).add(c)
    for src, owners in uses.items():
        edges.setdefault(src, set()).update(o for o in owners if o != src)
    problems = []
    for layer in ACYCLIC:
        mine = sorted(s for s in sources if layer_of(s) == layer)
        for comp in strongly_connected(mine, {s: edges.get(s, set()) & set(mine) for s in mine}):
            problems.append(f"src/{layer}/: a circle among {' '.join(sorted(comp))}")
    return (f"no circle among the files of {' '.join(ACYCLIC) or 'no layer'} (src/layers)",
            problems)


def strongly_connected(nodes, edges):
    """The circles of a small graph: its strongly connected parts of more than one node."""
    index, low, stack, on, parts = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(edges[v]):
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
                parts.append(part)

    for v in nodes:
        if v not in index:
            visit(v)
    return parts


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
