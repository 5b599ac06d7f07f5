#!/usr/bin/python3
"""Throttle episodes against the real thermlogd at 1 s over a copy of the ROCK 5C fixture, on an
old database (fixtures/db/amd64.db, schema 2) that it upgrades in place: policy6's
scaling_max_freq lowered with its cooling device (cpufreq-cpu6) at state 3 for about 10 s is one
episode, its start and end within the cycles the test saw stored around each change (no
wall-clock tightness), depth 1416 MHz, cause thermal; `thermlog throttle --json` and
GET /api/v1/throttle agree byte for byte; /metrics says thermlog_throttled 1 during, 0 after; a
cooling device's time_in_state_ms moving between two cycles that both see the maximum is a
counters episode; kill -9 with an episode open and a restart closes it at the last cycle that
saw it; a devfreq device that appears capped is found by the next rescan (the topology
throttle detection reads is found again when the channels change, kept while they do not); on
a copy of the x86 fixture, a thermal_throttle counter that grows is a "board" episode
(method counters, cause thermal) from the cycle before to the cycle after. Then, on a new
database (the old one's cycles lie in 2038, so its stamps are not the
wall clock the runs keep): runs over an episode carry it clipped to their interval (`runs show
--json` and GET /api/v1/runs/ID alike), one started before the cap and stopped during it, one
started during it and stopped after the release; a run after it has no throttled domain;
`runs stats` counts the throttled runs and their median share.

Four parts, each its own meson test (daemon-throttle-PART) so none is near its timeout: `cap`
(the old database upgraded, the episode, CLI = API, /metrics), `counters` (a counters episode,
kill -9 with one open, the rescan), `runs` and `x86`. Every step waits for a state (a cycle
stored, an episode written), never for the clock, so a loaded machine only makes it slower.
usage: test_throttle.py THERMLOGD THERMLOG FIXTURE DB_FIXTURE PART"""
import json
import os
import re
import shutil
import subprocess
import sys
import time
import urllib.error
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from thermlog_test import SCHEMA_VERSION, Daemon, Workdir, copy_fixture, cycles, main, query, wait_cycles, \
    wait_for, write_config  # noqa: E402

THERMLOGD, THERMLOG, FIXTURE, OLD_DB, PART = sys.argv[1:6]
POLICY6 = "devices/system/cpu/cpufreq/policy6/scaling_max_freq"
CDEV2 = "class/thermal/cooling_device2/cur_state"
CDEV1_STATS = "class/thermal/cooling_device1/stats/time_in_state_ms"
CDEV2_STATS = "class/thermal/cooling_device2/stats/time_in_state_ms"
DOMAIN = "cpufreq/policy6"


def write(root, rel, text):
    """Changes a file so that a cycle never reads it half written: in place as sysfs changes
    an attribute (one pwrite of as many bytes as it holds), the daemon's held files see it;
    replaced whole (a rename) when its length changes."""
    path = os.path.join(root, rel)
    data = text.encode()
    if os.path.exists(path) and os.path.getsize(path) == len(data):
        fd = os.open(path, os.O_WRONLY)
        try:
            os.pwrite(fd, data, 0)
        finally:
            os.close(fd)
        return
    with open(path + ".new", "w") as f:
        f.write(text)
    os.rename(path + ".new", path)


def last_cycle(db):
    c = cycles(db)
    return c[-1][0] if c else 0


def wait_cycle_after(db, ms, d, timeout=30):
    """Waits until a cycle stamped after @ms (ms since epoch) is stored: every cycle sampled
    from then on carries a later stamp (a cycle's stamp is its slot, which may lie before the
    moment it read the files)."""
    return wait_for(lambda: (d.alive() and last_cycle(db) * 1000 > ms) or None, timeout)


def run_start_ms(db, rid):
    return wait_for(lambda: (query(db, "SELECT start_ms FROM runs WHERE id = ?",
                                   (int(rid),)) or [[None]])[0][0], 10)


def episodes(db, domain=DOMAIN):
    return query(db, "SELECT id, start_ts, end_ts, last_seen, duration_ms, min_hz, max_hz, "
                 "cause, method, cooling FROM throttle_episodes WHERE domain = ? ORDER BY id",
                 (domain,))


def http(port, path):
    with urllib.request.urlopen("http://127.0.0.1:%d%s" % (port, path), timeout=10) as r:
        return r.read()


def throttled_metric(port):
    text = http(port, "/metrics").decode()
    m = re.search(r'^thermlog_throttled\{domain="cpufreq/policy6"\} (\S+)$', text, re.M)
    return m.group(1) if m else None


def cli(cfg, db, *args):
    return subprocess.run([THERMLOG, "-c", cfg, "--db", db, *args], capture_output=True,
                          timeout=60)


def run_start(cfg, label):
    p = subprocess.run([THERMLOG, "-c", cfg, "run", "start", "--label", label],
                       capture_output=True, text=True, timeout=30)
    if p.returncode != 0 or not p.stdout.strip().isdigit():
        raise RuntimeError("run start: %s" % p.stderr)
    return p.stdout.strip()


def run_stop(cfg, rid):
    p = subprocess.run([THERMLOG, "-c", cfg, "run", "stop", rid, "--exit", "0"],
                       capture_output=True, text=True, timeout=30)
    if p.returncode != 0:
        raise RuntimeError("run stop: %s" % p.stderr)


def runs_over_episode(tap, wd, root, cfg):
    """Three runs of label "hot" on a new database: into the episode, out of it, after it."""
    db = os.path.join(wd, "runs.db")
    d = Daemon(THERMLOGD, wd, ["-c", cfg, "--sysfs-root", root, "--db", db, "--listen",
                               "127.0.0.1:0"], name="throttle-runs").start()
    port = d.http_port()
    wait_cycles(db, 2, 30, d)
    hot = run_start(cfg, "hot")
    # the cap is first seen by a cycle stamped after the run's start
    wait_cycle_after(db, run_start_ms(db, hot), d)
    write(root, POLICY6, "1416000\n")
    write(root, CDEV2, "3\n")
    capped_at = time.monotonic()
    wait_for(lambda: episodes(db) or None, 30)
    wait_cycles(db, len(cycles(db)) + 2, 30, d)
    # The cooling device's own counter, as the kernel keeps it: the time at state 3 since the
    # cap, which the run's throttled time then is, not the cycles' stamps around it.
    counted_ms = int((time.monotonic() - capped_at) * 1000)
    with open(os.path.join(root, CDEV2_STATS)) as f:
        lines = f.read().splitlines()
    lines[3] = "state3\t%d" % (int(lines[3].split()[1]) + counted_ms)
    write(root, CDEV2_STATS, "\n".join(lines) + "\n")
    run_stop(cfg, hot)
    warm = run_start(cfg, "hot")
    # the release is first seen by a cycle stamped after this run's start
    wait_cycle_after(db, run_start_ms(db, warm), d)
    write(root, POLICY6, "2256000\n")
    write(root, CDEV2, "0\n")
    closed = wait_for(lambda: [e for e in episodes(db) if e[2] is not None] or None, 30)
    run_stop(cfg, warm)
    wait_cycles(db, len(cycles(db)) + 1, 30, d)
    cool = run_start(cfg, "hot")
    wait_cycle_after(db, run_start_ms(db, cool), d)
    run_stop(cfg, cool)
    if not tap.ok(closed and len(episodes(db)) == 1, "one episode on the new database",
                  episodes(db)):
        d.stop()
        return
    start, end = closed[0][1], closed[0][2]

    def shown(rid):
        p = cli(cfg, db, "runs", "show", rid, "--json")
        api = json.loads(http(port, "/api/v1/runs/" + rid))
        return (json.loads(p.stdout)["run"] if p.returncode == 0 else {}), api["run"]

    def bounds(rid):
        return query(db, "SELECT start_ms, end_ms FROM runs WHERE id = ?", (int(rid),))[0]

    # The hot run's device counted its capped time: its throttled time, exact (method
    # time_in_state_ms);
    # the warm run's did not move: the episode clipped to the run, to one cycle (± 1 s here).
    for rid, what, inside, method, within in [
            (hot, "from before the cap to inside it", lambda s, e: counted_ms, "time_in_state_ms",
             0),
            (warm, "from inside the episode to after its release", lambda s, e: end * 1000 - s,
             "episodes", 1)]:
        got, api = shown(rid)
        s_ms, e_ms = bounds(rid)
        want_ms = inside(s_ms, e_ms)
        th = got.get("throttle")
        doms = th and [x for x in th["domains"] if x["domain"] == DOMAIN]
        tap.ok(th == api.get("throttle") and doms and len(th["domains"]) == 1
               and doms[0]["episodes"] == 1 and 0 < want_ms < e_ms - s_ms
               and abs(doms[0]["throttled_s"] - want_ms / 1000) < 0.0005
               and abs(doms[0]["share"] - want_ms / (e_ms - s_ms)) < 1e-9
               and th["share"] == doms[0]["share"] and doms[0]["min_hz"] == 1416000000
               and doms[0].get("method") == method and doms[0].get("uncertainty_s") == within,
               "run %s (%s): throttled %.3f s of %.3f s at 1416 MHz, by %s (± %d s), as the "
               "API says" % (rid, what, want_ms / 1000, (e_ms - s_ms) / 1000, method, within),
               (th, api.get("throttle")))
    got, api = shown(cool)
    # The load source is off here: the domains the run loaded are not known (null).
    tap.ok(got.get("throttle") == {"share": 0, "loaded_share": None, "loaded_domains": None,
                                   "domains": []} and
           api["throttle"] == got["throttle"], "a run after the episode: no throttled domain",
           got.get("throttle"))
    p = cli(cfg, db, "runs", "--label", "hot", "--json")
    listed = json.loads(p.stdout)["runs"] if p.returncode == 0 else []
    tap.ok([r["throttle"] for r in listed] == [shown(r)[0]["throttle"] for r in (hot, warm, cool)],
           "the list gives each run the same throttle object", p.stderr)
    p = cli(cfg, db, "runs", "stats", "--label", "hot", "--json")
    lab = json.loads(p.stdout)["labels"][0] if p.returncode == 0 else {}
    shares = sorted(shown(r)[0]["throttle"]["share"] for r in (hot, warm))
    t = lab.get("throttle") or {}
    tap.ok(t.get("runs") == 3 and t.get("throttled") == 2 and
           abs(t.get("throttled_ratio", 0) - 2 / 3) < 1e-12 and t["share"]["n"] == 2 and
           abs(t["share"]["p50"] - (shares[0] + shares[1]) / 2) <= 1e-6,
           "runs stats: 2 of 3 runs throttled, the median of their shares", (t, shares))
    p = cli(cfg, db, "runs", "stats", "--label", "hot")
    tap.ok(p.returncode == 0 and b"throttled in 2 of 3 ok runs (66.67 %)" in p.stdout and
           b"throttled_pct" in p.stdout, "runs stats: the same in the text", p.stdout)
    tap.ok(d.stop() == 0, "the runs daemon stops cleanly")


def part_cap(tap, wd):
    """The old database upgraded in place, a cap held and released: its episode, the CLI's
    JSON = the API's, /metrics."""
    root = copy_fixture(FIXTURE, os.path.join(wd, "sysfs"))
    db = os.path.join(wd, "t.db")
    shutil.copyfile(OLD_DB, db)
    old_cycles = len(cycles(db))
    old_version = query(db, "PRAGMA user_version")[0][0]
    cfg = write_config(os.path.join(wd, "t.yaml"), rescan="2s")
    args = ["-c", cfg, "--sysfs-root", root, "--db", db, "--listen", "127.0.0.1:0"]
    d = Daemon(THERMLOGD, wd, args, name="throttle").start()
    port = d.http_port()
    if not tap.ok(port, "the daemon serves HTTP", d.log_text()):
        return
    wait_cycles(db, old_cycles + 3, 30, d)
    version = query(db, "PRAGMA user_version")[0][0]
    tap.ok(old_version < 7 and version == SCHEMA_VERSION,
           "the old database upgraded in place (schema %d to %d)" % (old_version, version))
    tap.ok(len(cycles(db)) >= old_cycles + 3, "its cycles kept, new ones added")
    tap.ok(episodes(db) == [] and throttled_metric(port) == "0",
           "no episode at the maximum, thermlog_throttled 0")

    # ~10 s capped at 1416 MHz with the cooling device at state 3
    before_cap = last_cycle(db)
    write(root, POLICY6, "1416000\n")
    write(root, CDEV2, "3\n")
    opened = wait_for(lambda: episodes(db) or None, 20)
    seen_open = last_cycle(db)
    tap.ok(opened and opened[0][2] is None, "an open episode appears", opened)
    during = wait_for(lambda: throttled_metric(port) == "1" or None, 10)
    tap.ok(during, "thermlog_throttled 1 during it")
    # episodes=open: the dashboard's "throttled now", the open episode alone
    now = json.loads(http(port, "/api/v1/throttle?from=%d&to=%d&episodes=open"
                          % (before_cap - 60, seen_open + 3600)))
    tap.ok([(e["domain"], e["end"]) for e in now["episodes"]] == [(DOMAIN, None)] and
           [x["domain"] for x in now["domains"]] == [DOMAIN],
           "?episodes=open lists the open episode and its domain", now)
    # held for five more cycles
    wait_cycles(db, len(cycles(db)) + 5, 30, d)
    before_release = last_cycle(db)
    write(root, POLICY6, "2256000\n")
    write(root, CDEV2, "0\n")
    closed = wait_for(lambda: [e for e in episodes(db) if e[2] is not None] or None, 20)
    seen_closed = last_cycle(db)
    if not tap.ok(closed, "the episode closes", d.log_text()[-2000:]):
        return
    _, start, end, last_seen, duration_ms, min_hz, max_hz, cause, method, cooling = closed[0]
    tap.ok(before_cap <= start <= seen_open,
           "start %d between the last cycle before the cap (%d) and the first seeing it (%d)"
           % (start, before_cap, seen_open))
    tap.ok(before_release <= end <= seen_closed,
           "end %d between the last cycle before the release (%d) and the first seeing it "
           "(%d)" % (end, before_release, seen_closed))
    tap.ok(duration_ms == (end - start) * 1000 and last_seen < end,
           "duration is end - start; last seen before the end")
    tap.ok(min_hz == 1416000000 and max_hz == 2256000000, "depth 1416 of 2256 MHz",
           (min_hz, max_hz))
    tap.ok(cause == "thermal" and method == "poll", "cause thermal, method poll",
           (cause, method))
    tap.ok("3 cpufreq-cpu6" in cooling, "the cooling device at its deepest state 3", cooling)
    tap.ok(wait_for(lambda: throttled_metric(port) == "0" or None, 10),
           "thermlog_throttled 0 after it")
    metrics = http(port, "/metrics").decode()
    m = re.search(r'^thermlog_throttle_seconds_total\{domain="cpufreq/policy6",'
                  r'cause="thermal"\} (\S+)$', metrics, re.M)
    tap.ok(m and float(m.group(1)) == duration_ms / 1000,
           "thermlog_throttle_seconds_total counts the episode", m and m.group(0))

    # the CLI's JSON is the API's, byte for byte, over a pinned window
    frm, to = str(start - 120), str(end + 120)
    p = cli(cfg, db, "throttle", "--from", frm, "--to", to, "--json")
    api = http(port, "/api/v1/throttle?from=%s&to=%s" % (frm, to))
    tap.ok(p.returncode == 0 and p.stdout == api, "thermlog throttle --json = GET "
           "/api/v1/throttle", "cli %r\napi %r" % (p.stdout, api))
    j = json.loads(api)
    shut = json.loads(http(port, "/api/v1/throttle?from=%s&to=%s&episodes=open" % (frm, to)))
    tap.ok(shut["episodes"] == [] and shut["domains"] == j["domains"],
           "once closed, ?episodes=open lists none; the domains' totals are the same", shut)
    try:
        http(port, "/api/v1/throttle?episodes=closed")
        code, body = 200, ""
    except urllib.error.HTTPError as e:
        code, body = e.code, e.read().decode()
    tap.ok(code == 400 and "'episodes' must be all or open" in body,
           "?episodes=closed is a 400 naming the parameter", (code, body))
    ep = [e for e in j["episodes"] if e["domain"] == DOMAIN]
    dom = [x for x in j["domains"] if x["domain"] == DOMAIN]
    tap.ok(len(ep) == 1 and ep[0]["min_hz"] == 1416000000 and ep[0]["cause"] == "thermal"
           and ep[0]["duration_s"] == end - start
           and ep[0]["cooling"] == [{"device": "cooling_device2", "type": "cpufreq-cpu6",
                                     "state": 3}],
           "the JSON episode", ep)
    share = (end - start) / float(end - start + 240)
    tap.ok(len(dom) == 1 and dom[0]["episodes"] == 1 and dom[0]["throttled_s"] == end - start
           and abs(dom[0]["share"] - share) < 1e-12 and dom[0]["min_hz"] == 1416000000,
           "the domain's totals", dom)
    p = cli(cfg, db, "throttle", "--from", frm, "--to", to)
    text = p.stdout.decode()
    tap.ok(p.returncode == 0 and "cpufreq/policy6" in text and "1416 MHz of 2256 MHz" in text
           and "deepest cap" in text, "the table", text)
    # the episode's duration and the domain's throttled time in one unit, as one writer says
    dur = "%d s" % (end - start)
    rows = [line for line in text.splitlines() if "cpufreq/policy6" in line]
    tap.ok(len(rows) == 2 and all(re.search(r"\s%s\s" % dur, r) for r in rows),
           "the episode and the domain's total both read %s" % dur, text)
    p = cli(cfg, db, "throttle", "--json")
    tap.ok(p.returncode == 0 and any(e["start"] == ep[0]["start"] for e in
                                     json.loads(p.stdout)["episodes"]),
           "without --from/--to the window is the whole history", p.stderr)
    p = cli(cfg, db, "throttle", "--from", frm, "--to", to, "--json", "--domain", "devfreq/*")
    tap.ok(p.returncode == 0 and json.loads(p.stdout)["episodes"] == [],
           "--domain keeps the matching domains")

    tap.ok(d.stop() == 0, "the daemon stops cleanly")


def part_counters(tap, wd):
    """A counters episode, kill -9 with an episode open and a restart, a device found by the
    rescan; on a new database."""
    root = copy_fixture(FIXTURE, os.path.join(wd, "sysfs"))
    db = os.path.join(wd, "t.db")
    cfg = write_config(os.path.join(wd, "t.yaml"), rescan="2s")
    args = ["-c", cfg, "--sysfs-root", root, "--db", db, "--listen", "127.0.0.1:0"]
    d = Daemon(THERMLOGD, wd, args, name="throttle").start()
    wait_cycles(db, 2, 30, d)
    # 300 ms at state 1 between two cycles that both see policy4 at its maximum
    with open(os.path.join(root, CDEV1_STATS)) as f:
        lines = f.read().splitlines()
    state1 = int(lines[1].split()[1])
    lines[1] = "state1\t%d" % (state1 + 300)
    write(root, CDEV1_STATS, "\n".join(lines) + "\n")
    counted = wait_for(lambda: episodes(db, "cpufreq/policy4") or None, 20)
    tap.ok(counted and counted[0][8] == "counters" and counted[0][4] == 300
           and counted[0][2] > counted[0][1] and counted[0][5] is None,
           "a counters episode of 300 ms between two cycles, depth unknown", counted)

    # kill -9 with an episode open, then a restart
    write(root, POLICY6, "1800000\n")
    reopened = wait_for(lambda: [e for e in episodes(db) if e[2] is None] or None, 20)
    wait_cycles(db, len(cycles(db)) + 2, 20, d)
    d.kill9()
    open_row = [e for e in episodes(db) if e[2] is None]
    last_before_restart = last_cycle(db)
    tap.ok(reopened and len(open_row) == 1, "an episode is open at the kill")
    d = Daemon(THERMLOGD, wd, args, name="throttle2").start()
    wait_cycles(db, len(cycles(db)) + 2, 30, d)
    if open_row:
        row = [e for e in episodes(db) if e[0] == open_row[0][0]]
        tap.ok(row and row[0][2] == open_row[0][3] and row[0][2] <= last_before_restart,
               "closed at the last cycle that saw it (%s)" % (row and row[0][2]), row)
        again = [e for e in episodes(db) if e[2] is None]
        tap.ok(len(again) == 1 and again[0][1] > last_before_restart,
               "the cap still held opens a new episode after the restart", again)
    write(root, POLICY6, "2256000\n")
    wait_for(lambda: not [e for e in episodes(db) if e[2] is None] or None, 20)

    # a device that appears capped: found by the next rescan, its episode recorded
    gpu = os.path.realpath(os.path.join(root, "class/devfreq/fb000000.gpu"))
    new = os.path.join(root, "class/devfreq/ff000000.test")
    shutil.copytree(gpu, new, symlinks=True)
    write(root, "class/devfreq/ff000000.test/max_freq", "300000000\n")
    found = wait_for(lambda: episodes(db, "devfreq/ff000000.test") or None, 30)
    tap.ok(found and found[0][2] is None and found[0][5] == 300000000,
           "a devfreq device that appears capped is found by the next rescan", found)
    shutil.rmtree(new)
    tap.ok(d.stop() == 0, "the daemon stops cleanly")
    tap.ok(not [e for e in episodes(db) if e[2] is None], "no episode left open")


def part_runs(tap, wd):
    root = copy_fixture(FIXTURE, os.path.join(wd, "sysfs"))
    runs_over_episode(tap, wd, root, write_config(os.path.join(wd, "t.yaml")))


def x86_board(tap, wd):
    root = copy_fixture(os.path.join(os.path.dirname(FIXTURE), "x86"), os.path.join(wd, "x86"))
    db = os.path.join(wd, "x86.db")
    cfg = write_config(os.path.join(wd, "x86.yaml"))
    d = Daemon(THERMLOGD, wd, ["-c", cfg, "--sysfs-root", root, "--db", db, "--listen",
                               "127.0.0.1:0"], name="x86").start()
    count = "devices/system/cpu/cpu2/thermal_throttle/core_throttle_count"
    if not tap.ok(len(wait_cycles(db, 3, 60, d)) >= 3, "x86: the daemon samples",
                  d.log_text()[-2000:]):
        return
    before = last_cycle(db)

    def board_closed(k):
        return wait_for(lambda: [e for e in episodes(db, "board") if e[2] is not None][k - 1:]
                        and [e for e in episodes(db, "board") if e[2] is not None], 30) or []

    # from 8: two events, each seen by one interval between two cycles. An episode closes at
    # the first cycle after it with no event (that cycle read the same count), so once the
    # first is closed the second event falls in a later interval, never the next one: each
    # opens an episode of its own however late the cycles run.
    for k, n in enumerate((9, 12), 1):
        write(root, count, "%d\n" % n)
        if not board_closed(k):
            break
    closed = board_closed(2)
    after = last_cycle(db)
    stamps = [c[0] for c in cycles(db)]
    tap.ok(closed and len(closed) == 2, "x86: one board episode per interval with events",
           "%s\ncycles %s\n%s" % (episodes(db, "board"), cycles(db)[-6:], d.log_text()[-2000:]))
    for _, start, end, last_seen, duration_ms, min_hz, max_hz, cause, method, zone in closed or []:
        between = [t for t in stamps if start < t < end]
        tap.ok(before <= start < end <= after and start in stamps and end in stamps
               and not between and duration_ms == (end - start) * 1000,
               "an episode from the cycle before the event to the one after (%d-%d)"
               % (start, end))
        tap.ok(method == "counters" and cause == "thermal" and min_hz is None and max_hz is None
               and zone == "", "method counters, cause thermal, no frequency, no zone",
               (method, cause, min_hz, max_hz, zone))
    p = cli(cfg, db, "throttle", "--json", "--domain", "board")
    j = json.loads(p.stdout) if p.returncode == 0 else {}
    tap.ok([e["method"] for e in j.get("episodes", [])] == ["counters", "counters"],
           "thermlog throttle --domain board shows it", p.stdout)
    p = cli(cfg, db, "throttle", "--domain", "board")
    text = p.stdout.decode()
    tap.ok(p.returncode == 0 and " - of -" not in text and
           text.count("no clock (whole-board signal)") == 3,
           "the text says plainly that a board episode caps no clock", text)
    tap.ok(d.stop() == 0, "the x86 daemon stops cleanly")


PARTS = {"cap": part_cap, "counters": part_counters, "runs": part_runs, "x86": x86_board}


def run(tap):
    if PART not in PARTS:
        tap.ok(False, "unknown part %r: one of %s" % (PART, ", ".join(sorted(PARTS))))
        return
    with Workdir("thermlog-throttle-%s." % PART) as wd:
        PARTS[PART](tap, wd)


main(run)
