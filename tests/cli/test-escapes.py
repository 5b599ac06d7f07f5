#!/usr/bin/python3
"""Escapes and formulas (TAP): text from the kernel, the configuration or a database never
reaches a terminal raw, nor a spreadsheet as a formula.

`thermlog sample` over a tree whose zone type holds ESC and BEL prints their escapes; a label or
a capacitor name with a control character is refused by the configuration, naming it;
`thermlog export` writes labels (and names) beginning with =, +, -, @, a tab or a carriage return
behind a single quote, quoted (OWASP's CSV injection advice), in the long and the wide format,
and `thermlog import` reads them back as they were.

usage: test-escapes.py THERMLOG FIXTURES
"""
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from thermlog_test import done, ok  # noqa: E402

thermlog, fixtures = sys.argv[1], sys.argv[2]
LABELS = ['=HYPERLINK("http://x","y")', "+1+1", "-2+3", "@SUM(A1)", "\tx", "\rx", "plain"]


def run(*args):
    p = subprocess.run([thermlog, *args], capture_output=True, timeout=60)
    return p.returncode, p.stdout, p.stderr.decode(errors="replace")


def csv_cell(s):
    return '"' + s.replace('"', '""') + '"'


def main():
    tmp = tempfile.mkdtemp(prefix="thermlog-escapes-")
    try:
        tree = os.path.join(tmp, "sys")
        shutil.copytree(os.path.join(fixtures, "rock5c"), tree, symlinks=True)
        with open(os.path.join(tree, "class/thermal/thermal_zone0/type"), "w") as f:
            f.write("soc\x1b]0;owned\x07\n")
        rc, out, err = run("sample", "--sysfs-root", tree)
        ok(rc == 0 and b"\x1b" not in out and b"\x07" not in out and b"soc\\x1b]0;owned\\x07"
           in out, "sample prints a zone type's ESC and BEL as escapes", (rc, out[:600], err))

        cfg = os.path.join(tmp, "bad.yaml")
        with open(cfg, "w") as f:
            f.write('capacitors:\n  - {name: "C1\\e[2J", sensor: thermal/soc-thermal, '
                    "rated_life_h: 2000, rated_temp_c: 105}\n"
                    'channels:\n  thermal/soc-thermal: {label: "SoC\\a"}\n')
        rc, out, err = run("check-config", cfg)
        ok(rc == 2 and "name: a control character (\\x1b)" in err and
           "label: a control character (\\x07)" in err and "\x1b" not in err,
           "a capacitor name and a label with control characters are refused, named", err)

        db = os.path.join(tmp, "t.db")
        src = os.path.join(tmp, "in.csv")
        with open(src, "w", newline="") as f:
            f.write("time,unix,channel,value,unit,label\r\n")
            for i, label in enumerate(LABELS):
                f.write(f"2026-01-01T00:00:00Z,1767225600,thermal/z{i},45.5,celsius,"
                        f"{csv_cell(label)}\r\n")
        rc, _, err = run("--db", db, "import", src)
        ok(rc == 0, "labels imported as they are", err)
        rc, long_out, err = run("--db", db, "export")
        cells = {f",thermal/z{i},": csv_cell("'" + label) if label != "plain" else "plain"
                 for i, label in enumerate(LABELS)}
        lines = long_out.decode().split("\r\n")
        good = all(any(k in line and line.endswith("," + cell) for line in lines)
                   for k, cell in cells.items())
        ok(rc == 0 and good, "export: every label a spreadsheet would evaluate behind a quote",
           lines)
        rc, wide_out, err = run("--db", db, "export", "--format", "wide")
        header = wide_out.decode().split("\r\n")[0]
        ok(rc == 0 and csv_cell("'=HYPERLINK(\"http://x\",\"y\") [thermal/z0] (celsius)") in header
           and "plain [thermal/z6] (celsius)" in header,
           "export --format wide: a header cell too", header)
        for fmt, text in (("long", long_out), ("wide", wide_out)):
            path = os.path.join(tmp, f"{fmt}.csv")
            with open(path, "wb") as f:
                f.write(text)
            back = os.path.join(tmp, f"{fmt}.db")
            rc, _, err = run("--db", back, "import", path)
            rc2, chans, _ = run("--db", back, "channels", "--json")
            ok(rc == 0 and rc2 == 0 and all(f'"label":"{label}"'.encode() in
                                            chans.replace(b'\\"', b'"').replace(b"\\t", b"\t")
                                            .replace(b"\\r", b"\r") for label in LABELS),
               f"import reads the {fmt} export's labels back as they were", (err, chans[:800]))
    finally:
        shutil.rmtree(tmp)
    return done()


sys.exit(main())
