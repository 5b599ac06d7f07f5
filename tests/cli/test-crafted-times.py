#!/usr/bin/python3
"""A crafted database with times and values at the 64-bit limits (TAP).

Fifty imported minutes of soc-thermal, then rows written behind thermlog's back: cycles at
INT64_MIN, INT64_MIN + 1, INT64_MAX - 1 and INT64_MAX, samples of 2^63 - 1 and -2^63 at plausible
times, a run and a throttle episode spanning the whole 64-bit range. Every command (and a report
comparing a good database with it) answers from the rows a thermlog could have written, or
refuses the run and the episode naming the file; none overflows (the sanitizer build stopped at
signed overflows in timefmt, query, lifetime, stats, runs and the throttle report).

usage: test-crafted-times.py THERMLOG
"""
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from thermlog_test import done, ok  # noqa: E402

thermlog = sys.argv[1]
KEY = "thermal/soc-thermal"
MIN, MAX = -(1 << 63), (1 << 63) - 1


def varint(u):
    b = bytearray()
    while True:
        c, u = u & 0x7F, u >> 7
        b.append(c | (0x80 if u else 0))
        if not u:
            return bytes(b)


def zigzag(q):
    return ((q << 1) ^ (q >> 63)) & ((1 << 64) - 1)


def run(*args):
    p = subprocess.run([thermlog, *args], capture_output=True, text=True, timeout=120)
    return p.returncode, p.stdout, p.stderr


def seed(tmp, name, crafted):
    db = os.path.join(tmp, name)
    csv = os.path.join(tmp, name + ".csv")
    with open(csv, "w") as f:
        f.write("unix,channel,value,unit\n")
        f.writelines(f"{1790000000 + 60 * i},{KEY},{40 + i % 5}.5,celsius\n" for i in range(50))
    rc, _, err = run("--db", db, "import", csv)
    if rc != 0:
        raise SystemExit(f"Bail out! import: {err}")
    if crafted:
        con = sqlite3.connect(db)
        cid = con.execute("SELECT id FROM channels WHERE key = ?", (KEY,)).fetchone()[0]
        rows = [(MIN, 40000), (MIN + 1, MAX), (MAX - 1, MIN), (MAX, 41000),
                (1790010000, MAX), (1790010060, MIN)]
        for ts, q in rows:  # a cycle's head row: one channel's value as (id, zigzag q) varints
            con.execute("INSERT INTO samples (ts, clock, data, boot) VALUES (?, 0, ?, NULL)",
                        (ts, varint(cid) + varint(zigzag(q))))
        con.execute("INSERT INTO throttle_episodes (domain, start_ts, end_ts, last_seen, "
                    "duration_ms, cause, method, stuck) VALUES ('cpufreq/policy6', ?, ?, ?, ?, "
                    "'thermal', 'poll', 0)", (MIN, MAX, MAX, MAX))
        con.execute("INSERT INTO runs (label, start_ms, end_ms, status, origin, import_key) "
                    "VALUES ('x', ?, ?, 'ok', 'import', 'k1')", (MIN, MAX))
        con.commit()
        con.close()
    return db


def main():
    tmp = tempfile.mkdtemp(prefix="thermlog-crafted-times-")
    try:
        good, bad = seed(tmp, "good.db", False), seed(tmp, "crafted.db", True)
        sane = lambda err: "runtime error" not in err and "AddressSanitizer" not in err
        rc, out, err = run("--db", bad, "stats", "--json")
        chans = json.loads(out)["channels"] if rc == 0 else []
        ok(rc == 0 and sane(err) and len(chans) == 1 and chans[0]["count"] == 50 and
           chans[0]["max"] == 44.5,
           "stats reads the fifty values a thermlog could have written, the crafted ones "
           "left out", (rc, err[-300:], chans))
        for args in (["stats", "--weight", "time"], ["stats", "--include-unsynced"],
                     ["peak", "--channel", KEY], ["export"], ["lifetime"],
                     ["stats", "--from", str(MIN + 2), "--to", str(MAX - 2)]):
            rc, out, err = run("--db", bad, *args)
            ok(rc in (0, 2) and sane(err), f"{' '.join(args)}: answered, no overflow",
               (rc, err[-300:]))
        rc, out, err = run("--db", bad, "export")
        ok(rc == 0 and len(out.splitlines()) == 51, "export has the fifty rows",
           out.splitlines()[-3:])
        for args, what in ((["runs"], "run 1"), (["throttle"], "throttle episode 1")):
            rc, out, err = run("--db", bad, *args)
            ok(rc != 0 and sane(err) and "crafted.db" in err and what in err and
               "beyond 34,800 years" in err,
               f"{args[0]}: the {what} at the 64-bit limits is refused, naming the file",
               (rc, err[-300:]))
        rc, out, err = run("--db", good, "report", "--compare", bad, "-o",
                           os.path.join(tmp, "r.html"))
        ok(rc != 0 and sane(err) and "crafted.db" in err and "run 1" in err,
           "report --compare a crafted database: refused naming it, no overflow",
           (rc, err[-300:]))
    finally:
        shutil.rmtree(tmp)
    return done()


sys.exit(main())
