#!/usr/bin/env python3
"""src/layers, read once for the build and for scripts/check-architecture.py.

As a program (run by src/meson.build when the build is configured):
    layers.py SRC_DIR OUT_DIR
writes OUT_DIR/<layer>/, the fence of each folder: for every header of a layer it does not
reach, and for every third-party header whose home is elsewhere, a stand-in of that name whose
one line is an #error naming the rule. Each folder's library is compiled with the include
directories of the layers it reaches and then its fence, so a reaching #include stops the build
with the rule's words. Prints the layers, one a line, "layer reached...", for meson to read.
"""
import os
import sys


def parse(path):
    """(reach, never, private, libraries, acyclic) from src/layers:
    reach: {layer: [layers it reaches]} in the file's order;
    never: [(files pattern, [patterns it never reaches])];
    private: [header patterns private to their folder];
    libraries: {header: (fence, home)}, home as layer/module;
    acyclic: [layers whose files reach each other without a circle]."""
    reach, never, private, libraries, acyclic = {}, [], [], {}, []
    with open(path, encoding="utf-8") as f:
        for number, raw in enumerate(f, 1):
            line = raw.split("#", 1)[0].strip()
            if not line:
                continue
            head, sep, tail = line.partition(":")
            words = head.split()
            if not sep or not words:
                raise ValueError(f"{path}:{number}: expected 'NAME: ...', got '{line}'")
            if words[0] == "never" and len(words) == 2:
                never.append((words[1], tail.split()))
            elif words[0] == "private" and len(words) == 1:
                private += tail.split()
            elif words[0] == "acyclic" and len(words) == 1:
                acyclic += tail.split()
            elif words[0] == "library" and len(words) == 3:
                libraries[words[2]] = (words[1], tail.strip())
            elif len(words) == 1:
                reach[words[0]] = tail.split()
            else:
                raise ValueError(f"{path}:{number}: not a rule: '{line}'")
    return reach, never, private, libraries, acyclic


def headers_of(src, layer):
    folder = os.path.join(src, layer)
    return sorted(n for n in os.listdir(folder) if n.endswith(".h"))


def write_fences(src, out):
    reach, _, _, libraries, _ = parse(os.path.join(src, "layers"))
    for layer, reached in reach.items():
        fence = os.path.join(out, layer)
        os.makedirs(fence, exist_ok=True)
        stands = {}
        for other in reach:
            if other == layer or other in reached:
                continue
            for h in headers_of(src, other):
                stands[h] = (f"src/{layer}/ may not include {h}: the {layer} layer does not "
                             f"reach {other} (src/layers)")
        for h, (_, home) in libraries.items():
            if home.split("/")[0] != layer:
                stands[h] = f"<{h}> has one home, {home} (src/layers)"
        for dirpath, _, names in os.walk(fence):  # a stand-in no rule wants now goes
            for n in names:
                path = os.path.join(dirpath, n)
                if os.path.relpath(path, fence).replace(os.sep, "/") not in stands:
                    os.remove(path)
        for h, message in stands.items():
            path = os.path.join(fence, h)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            text = f'#error "{message}"\n'
            old = open(path, encoding="utf-8").read() if os.path.exists(path) else None
            if old != text:  # an unchanged stand-in keeps its time: nothing to rebuild
                with open(path, "w", encoding="utf-8") as f:
                    f.write(text)
        print(layer, *reached)


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: layers.py SRC_DIR OUT_DIR")
    write_fences(sys.argv[1], sys.argv[2])
