#!/usr/bin/python3
"""CSV export/import, peak, channels and backup end to end (TAP).

usage: csv-check.py THERMLOG BENCH_STATS
BENCH_STATS (bench/stats.c built) generates realistic databases through the store API for
the flat-memory check: exporting 40 days must take no more memory than exporting 2 days.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from thermlog_test import done, ok  # noqa: E402

thermlog, bench = sys.argv[1], sys.argv[2]

def run(*args, stdin=None, check=True):
    p = subprocess.run([thermlog, *args], capture_output=True, input=stdin)
    if check and p.returncode != 0:
        raise SystemExit(f"Bail out! thermlog {' '.join(args)}: rc {p.returncode}: "
                         f"{p.stderr.decode()}")
    return p


def max_rss_kib(args):
    """Peak RSS of thermlog ARGS from /proc/PID/status VmHWM, read while it streams to us.

    (ru_maxrss from wait4 is useless here: a forked or vforked child starts with Python's
    high-water mark.)"""
    # Under AddressSanitizer freed blocks wait in a quarantine (256 MiB by default), so the peak
    # would count what the command allocated over its life, not what it held at once.
    env = dict(os.environ)
    if "ASAN_OPTIONS" in env:
        env["ASAN_OPTIONS"] += ":quarantine_size_mb=0"
    p = subprocess.Popen([thermlog, *args], stdout=subprocess.PIPE, env=env)
    peak = 0
    while True:
        try:
            with open(f"/proc/{p.pid}/status") as f:
                for line in f:
                    if line.startswith("VmHWM:"):
                        peak = max(peak, int(line.split()[1]))
        except OSError:
            pass
        if not p.stdout.read(1 << 16):
            break
    return p.wait(), peak


def main():
    tmp = tempfile.mkdtemp(prefix="thermlog-csv-")
    try:
        db = os.path.join(tmp, "a.db")
        src = os.path.join(tmp, "in.csv")
        # Keys as users may bring them: a comma and quotes are valid key characters.
        # A label column names the new channels (a comma and parentheses in one of them).
        lines = ["time,channel,value,unit,label"]
        for i in range(300):
            ts = 1787184000 + 60 * i
            iso = f"2026-08-20T{ts // 3600 % 24:02d}:{ts // 60 % 60:02d}:00Z"
            lines.append(f"{iso},thermal/soc-thermal,{45 + (i * 7919) % 300 / 1000 + i % 30:.3f},"
                         'celsius,"SoC (center, die)"')
            lines.append(f"{ts},devfreq/fdab0000.npu,{[300000000, 1000000000][i % 7 == 0]},hertz")
            if i % 3 == 0:
                lines.append(f'{iso},"bench,rig""B""",{20 + i % 5 * 0.25:.2f},celsius')
        with open(src, "w") as f:
            f.write("\n".join(lines) + "\n")
        p = run("--db", db, "import", src)
        ok(b"imported 700 values of 3 channels (3 new channels)" in p.stdout, "import", p.stdout)

        long1 = run("--db", db, "export").stdout
        ok(long1.startswith(b"time,unix,channel,value,unit,label\r\n"
                            b"2026-08-20T00:00:00Z,1787184000,"),
           "long export header and first row", long1[:120])
        ok(b'"bench,rig""B""",20.00,celsius,\r\n' in long1,
           "RFC 4180 quoting of an odd key; no label of its own: an empty label cell")
        ok(b'thermal/soc-thermal,45.000,celsius,"SoC (center, die)"\r\n' in long1,
           "values exact at the resolution, with the imported label")

        # Round trip: export long -> import into an empty database -> export long.
        exported = os.path.join(tmp, "export.csv")
        with open(exported, "wb") as f:
            f.write(long1)
        db2 = os.path.join(tmp, "b.db")
        run("--db", db2, "import", exported)
        long2 = run("--db", db2, "export").stdout
        ok(long1 == long2, "round trip: the second export is identical, labels included")
        chans = {c["key"]: c for c in
                 json.loads(run("--db", db2, "channels", "--json").stdout)["channels"]}
        ok(chans.get("thermal/soc-thermal", {}).get("label") == "SoC (center, die)",
           "the label survives the long round trip", chans.get("thermal/soc-thermal"))
        # Re-importing changes nothing; so does importing through stdin.
        run("--db", db2, "import", exported)
        run("--db", db2, "import", "-", stdin=long1)
        ok(run("--db", db2, "export").stdout == long1, "re-import (file and stdin) changes nothing")

        wide = run("--db", db, "export", "--format", "wide", "--channel", "thermal/*",
                   "--channel", "devfreq/*").stdout.decode().split("\r\n")
        ok(wide[0] == 'time,unix,devfreq/fdab0000.npu (hertz),'
           '"SoC (center, die) [thermal/soc-thermal] (celsius)"',
           "wide header: KEY (UNIT), or LABEL [KEY] (UNIT) for a labelled channel", wide[0])
        ok(wide[1].startswith("2026-08-20T00:00:00Z,1787184000,1000000000,45.000"), "wide row",
           wide[1])
        out = os.path.join(tmp, "w.csv")
        run("--db", db, "export", "--format", "wide", "-o", out, "--from", "2026-08-20T01:00:00Z",
            "--to", "2026-08-20T02:00:00Z")
        with open(out, newline="") as f:
            rows = f.read().split("\r\n")
        ok(len(rows) == 62 and all(r.count(",") == 4 for r in rows[1:-1]),
           "wide -o FILE over one hour: 60 rows, an empty cell where a value is missing",
           f"{len(rows)} {rows[:3]}")

        # Wide round trip: export wide -> import into an empty database -> export long equals
        # the original long export (values, units and labels).
        wfile = os.path.join(tmp, "wide-all.csv")
        run("--db", db, "export", "--format", "wide", "-o", wfile)
        db3 = os.path.join(tmp, "c.db")
        p = run("--db", db3, "import", wfile, check=False)
        ok(p.returncode == 0 and b"imported 700 values of 3 channels (3 new channels)" in p.stdout,
           "a wide export imports back", p.stdout + p.stderr)
        # (Within a cycle the rows follow the channels' ids, which the wide file's key order
        # assigns differently: compare the rows as a set.)
        long3 = run("--db", db3, "export").stdout if p.returncode == 0 else b""
        ok(sorted(long3.split(b"\r\n")) == sorted(long1.split(b"\r\n")),
           "wide round trip: its long export holds the original's rows, labels included")
        # A wide header cell that names no channel is an error naming the line and column.
        badw = os.path.join(tmp, "badwide.csv")
        with open(badw, "w") as f:
            f.write("time,x/ok (celsius),not a channel\n2026-08-21T00:00:00Z,1.5,2\n")
        p = run("--db", db3, "import", badw, check=False)
        ok(p.returncode != 0 and f"{badw}:1: column 3 'not a channel' is not a channel"
           in p.stderr.decode(), "a bad wide header names its column", p.stderr)

        # Bad rows: reported with line numbers, nothing imported unless --skip-bad.
        bad = os.path.join(tmp, "bad.csv")
        with open(bad, "w") as f:
            f.write("channel,value,time\n"
                    "x/ok,1.5,2026-08-21T00:00:00Z\n"
                    "x/ok,1.5,yesterday\n"
                    "bad key,2,2026-08-21T00:01:00Z\n"
                    "x/ok,abc,2026-08-21T00:02:00Z\n"
                    "x/ok,2.25,2026-08-21T00:03:00Z\n")
        before = run("--db", db, "export").stdout
        p = run("--db", db, "import", bad, check=False)
        err = p.stderr.decode()
        ok(p.returncode == 1 and f"{bad}:3: bad time 'yesterday'" in err
           and f"{bad}:4: channel name 'bad key' breaks the key rules" in err
           and f"{bad}:5: bad value 'abc'" in err and "nothing imported" in err,
           "bad rows named with line numbers", err)
        ok(run("--db", db, "export").stdout == before, "nothing half-imported")
        # The file's bytes quoted in an error reach a terminal escaped, never raw.
        esc = os.path.join(tmp, "esc.csv")
        with open(esc, "wb") as f:
            f.write(b"channel,value,time\nx/ok,1\x1b]0;pwned\x07,2026-08-21T00:00:00Z\n")
        p = run("--db", db, "import", esc, check=False)
        ok(p.returncode == 1 and b"bad value '1\\x1b]0;pwned\\x07'" in p.stderr
           and b"\x1b" not in p.stderr and b"\x07" not in p.stderr,
           "an import error shows the file's control characters escaped", p.stderr)
        p = run("--db", db, "import", "--skip-bad", bad)
        ok(b"imported 2 values" in p.stdout and b"3 bad rows skipped" in p.stdout,
           "--skip-bad imports the good rows", p.stdout + p.stderr)
        p = run("--db", db, "import", os.path.join(tmp, "missing.csv"), check=False)
        ok(p.returncode == 1 and b"could not read" in p.stderr, "missing input file")
        with open(bad, "w") as f:
            f.write("when,channel,value\n1,a,1\n")
        p = run("--db", db, "import", bad, check=False)
        ok(p.returncode == 1 and b":1: the header must name the columns time" in p.stderr,
           "header without time", p.stderr)
        with open(bad, "w") as f:
            f.write('time,channel,value\n1787184000,a,"1\n')
        p = run("--db", db, "import", bad, check=False)
        ok(p.returncode == 1 and b"line 2: unterminated quoted field" in p.stderr,
           "malformed CSV names its line", p.stderr)

        # channels, peak, backup.
        chans = json.loads(run("--db", db, "channels", "--json").stdout)["channels"]
        ok([c["key"] for c in chans] == ['bench,rig"B"', "devfreq/fdab0000.npu",
                                          "thermal/soc-thermal", "x/ok"], "channels --json")
        peak = json.loads(run("--db", db, "peak", "--channel", "thermal/soc-thermal",
                              "--samples", "5", "--json").stdout)
        times = [r[0] for r in peak["rows"]]
        ok(len(times) == 5 and peak["max_time"] == times[2] and peak["rows"][2][1] == peak["max"]
           and [c["key"] for c in peak["columns"]][0] == "thermal/soc-thermal",
           "peak: 5 cycles centred on the maximum", peak)
        p = run("--db", db, "peak", "--channel", "*", check=False)
        ok(p.returncode == 2 and b"'*' matches 4 channels; peak needs one" in p.stderr,
           "peak needs one channel", p.stderr)
        backup = os.path.join(tmp, "copy.db")
        run("--db", db, "backup", backup)
        ok(run("--db", backup, "export").stdout == run("--db", db, "export").stdout,
           "backup holds the same history")
        p = run("--db", db, "backup", backup, check=False)
        ok(p.returncode == 1 and b"exists" in p.stderr, "backup refuses to overwrite")

        # Flat memory: a 20x larger export needs no more memory.
        small, big = os.path.join(tmp, "small.db"), os.path.join(tmp, "big.db")
        for path, days in ((small, 2), (big, 40)):
            subprocess.run([bench, "--generate-only", "--days", str(days), "--db", path],
                           check=True, capture_output=True)
        rc1, rss_small = max_rss_kib(["--db", small, "export"])
        rc2, rss_big = max_rss_kib(["--db", big, "export"])
        rc3, rss_wide = max_rss_kib(["--db", big, "export", "--format", "wide"])
        cycles = json.loads(run("--db", big, "stats", "--json").stdout)["cycles"]
        ok(rc1 == rc2 == rc3 == 0 and cycles == 40 * 1440
           and rss_big <= rss_small + 2048 and rss_wide <= rss_small + 2048,
           f"flat memory: 2 days {rss_small} KiB, 40 days {rss_big} KiB (wide {rss_wide} KiB)")
    finally:
        shutil.rmtree(tmp)
    return done()


sys.exit(main())
