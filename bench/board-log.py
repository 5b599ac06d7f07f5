#!/usr/bin/python3
"""The store's chunks on a real board's log, beside the simulated year of bench/store-wear.

The log: tests/fixtures/boardlog/sbc-bench-rk3588.txt, the monitoring lines sbc-bench printed
on four RK3588/RK3588S boards while it ran (each cluster's clock, the load average, the CPU
use, the SoC's temperature; every 5 s to 2 min; README.md there says where it comes from).
Each board's lines are imported into a fresh database with `thermlog import` at their own
times, a marker value after them closes their blocks, and the import's maintenance compacts
them as the daemon would (chunks of the block codec, src/base/blockcodec.c, in 4-hour blocks).
The figure is the compacted blobs' bytes (the channels' chunks, then with the blocks' maps) per
value. The same sums are taken over the simulated year store-wear writes (its -k database),
beside its own whole-file figure (bytes of the database per value).

usage: bench/board-log.py [BUILD] [--keep]
  BUILD: the build directory (default build), whose bench/store-wear -k writes the year
  (about 20 s); --keep keeps the databases and prints where."""
import argparse
import datetime
import os
import re
import shutil
import sqlite3
import subprocess
import tempfile

here = os.path.dirname(os.path.abspath(__file__))
LOG = os.path.join(here, "..", "tests", "fixtures", "boardlog", "sbc-bench-rk3588.txt")
HEAD = re.compile(r"^== results/(\w+)\.txt: .*\(\w+, (\d+ \w+ \d+) [\d:]+ ([+-]\d{4})\)$")
LINE = re.compile(r"^(\d\d):(\d\d):(\d\d): +([\d/ ]+)MHz +([\d.]+) +(\d+)% .* ([\d.]+)°C")


def parse(path):
    """{board: (clusters, [(unix s, [MHz per cluster], load, cpu %, temp °C)])}."""
    logs, board, day, tz, last = {}, None, None, None, None
    with open(path, encoding="utf-8") as f:
        for line in f:
            m = HEAD.match(line.rstrip("\n"))
            if m:
                board = m.group(1)
                day = datetime.datetime.strptime(m.group(2), "%d %b %Y")
                tz = datetime.timezone(datetime.timedelta(
                    hours=int(m.group(3)[:3]), minutes=int(m.group(3)[0] + m.group(3)[3:])))
                last = None
                continue
            m = LINE.match(line)
            if not m or board is None:
                continue
            t = day.replace(hour=int(m.group(1)), minute=int(m.group(2)),
                            second=int(m.group(3)), tzinfo=tz)
            if last is not None and t < last - datetime.timedelta(hours=12):
                t += datetime.timedelta(days=1)  # past midnight
                day += datetime.timedelta(days=1)
            if last is not None and t <= last:
                continue  # a section's first line repeats the previous one's last
            last = t
            clocks = [int(c) for c in m.group(4).replace(" ", "").split("/")]
            logs.setdefault(board, (len(clocks), []))[1].append(
                (int(t.timestamp()), clocks, m.group(5), m.group(6), m.group(7)))
    return logs


def write_csv(path, board, clusters, rows):
    """A wide CSV as thermlog import reads it; the keys: sbc-bench/BOARD/...; the values."""
    keys = ["sbc-bench/%s/cpufreq/cluster%d (hertz)" % (board, c) for c in range(clusters)]
    keys += ["sbc-bench/%s/load (1)" % board, "sbc-bench/%s/cpu (percent)" % board,
             "sbc-bench/%s/soc-thermal (celsius)" % board]
    with open(path, "w") as f:
        f.write("unix," + ",".join(keys) + "\n")
        for ts, clocks, load, cpu, temp in rows:
            f.write("%d,%s,%s,%s,%s\n" % (ts, ",".join(str(c * 1000000) for c in clocks),
                                         load, cpu, temp))
    return len(rows) * len(keys)


def blob_bytes(db, where_channels, where_blocks, block_args=()):
    """(chunk bytes, map bytes) of the compacted cycles."""
    con = sqlite3.connect("file:%s?mode=ro" % db, uri=True)
    try:
        chunks = con.execute("SELECT coalesce(sum(length(data)), 0) FROM chunks WHERE series = 0 "
                             "AND " + where_channels).fetchone()[0]
        maps = con.execute("SELECT coalesce(sum(length(map)), 0) FROM blocks WHERE series = 0 "
                           "AND " + where_blocks, block_args).fetchone()[0]
        return chunks, maps
    finally:
        con.close()


def board_log(thermlog, tmp):
    logs = parse(LOG)
    db = os.path.join(tmp, "boards.db")
    values, cycles = 0, 0
    for board, (clusters, rows) in sorted(logs.items(), key=lambda kv: kv[1][1][0][0]):
        csv = os.path.join(tmp, board + ".csv")
        values += write_csv(csv, board, clusters, rows)
        cycles += len(rows)
        subprocess.run([thermlog, "--db", db, "import", "--format", "wide", csv], check=True,
                       stdout=subprocess.DEVNULL)
    last = max(rows[-1][0] for _, rows in logs.values())
    marker = os.path.join(tmp, "marker.csv")
    with open(marker, "w") as f:
        f.write("unix,bench/marker (1)\n%d,1\n" % (last + 5 * 86400))
    subprocess.run([thermlog, "--db", db, "import", "--format", "wide", marker], check=True,
                   stdout=subprocess.DEVNULL)
    con = sqlite3.connect(db)
    head = con.execute("SELECT count(*) FROM samples WHERE ts <= ?", (last,)).fetchone()[0]
    blocks = con.execute("SELECT count(DISTINCT block) FROM blocks WHERE series = 0 AND "
                         "block <= ?", (last,)).fetchone()[0]
    con.close()
    if head:
        raise SystemExit("board-log: %d of the log's cycles were not compacted" % head)
    chunks, maps = blob_bytes(db, "channel_id IN (SELECT id FROM channels WHERE key LIKE "
                              "'sbc-bench/%')", "block <= ?", (last,))
    return logs, values, cycles, blocks, chunks, maps


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build", nargs="?", default="build")
    ap.add_argument("--keep", action="store_true")
    a = ap.parse_args()
    thermlog = os.path.join(a.build, "src", "thermlog")
    tmp = tempfile.mkdtemp(prefix="thermlog-board-log.")
    try:
        logs, values, cycles, blocks, chunks, maps = board_log(thermlog, tmp)
        print("real board: %d RK3588/RK3588S sbc-bench logs (%s), %d cycles x %s channels = %d "
              "values in %d blocks" % (len(logs), ", ".join(sorted(logs)), cycles,
                                       "/".join(sorted({str(c + 3) for c, _ in logs.values()})),
                                       values, blocks))
        print("real board: chunks %d B, maps %d B: %.2f bytes per value (chunks), %.2f with the "
              "maps" % (chunks, maps, chunks / values, (chunks + maps) / values))
        out = subprocess.run([os.path.join(a.build, "bench", "store-wear"), "-k", "-d", tmp],
                             check=True, capture_output=True, text=True).stdout
        line = [x for x in out.splitlines() if x.startswith("year:")][0]
        print("simulated " + line)
        m = re.match(r"year: (\d+) cycles x (\d+) channels", line)
        year = os.path.join(tmp, "wear.db")
        con = sqlite3.connect("file:%s?mode=ro" % year, uri=True)
        head = con.execute("SELECT count(*) FROM samples").fetchone()[0]
        con.close()
        # The chunks hold the cycles not in the head (the last block's wait there).
        n = int(m.group(2))
        yvalues = (int(m.group(1)) - head) * n
        ychunks, ymaps = blob_bytes(year, "1", "1")
        print("simulated year: %d compacted cycles x %d channels = %d values: chunks %d B, maps "
              "%d B: %.2f bytes per value (chunks), %.2f with the maps" %
              (yvalues // n, n, yvalues, ychunks, ymaps, ychunks / yvalues,
               (ychunks + ymaps) / yvalues))
        if a.keep:
            print("kept: %s" % tmp)
    finally:
        if not a.keep:
            shutil.rmtree(tmp, ignore_errors=True)


main()
