#!/usr/bin/python3
"""GET /api/v1/report against `thermlog report` over the same database and configuration (the
capacitor history of tests/report/lifetime.py, a pinned window): HTML, Markdown, lifetime=1 and
lifetime=only byte for byte equal to the CLI's document for the same arguments, as an attachment
with a file name and the format's type; bad parameters are a 400 naming the parameter.
Usage: test-report.py THERMLOGD THERMLOG FIXTURE"""
import datetime
import json
import os
import re
import signal
import subprocess
import sys
import urllib.error
import urllib.request

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "lib"))
sys.path.insert(0, os.path.join(here, "..", "report"))
from thermlog_test import Daemon, Workdir, main, wait_for  # noqa: E402
import lifetime as history  # noqa: E402

T0 = history.T_START
T1 = T0 + 3 * 86400


def run(tap):
    thermlogd, thermlog, fixture = sys.argv[1:4]
    with Workdir("thermlog-http-report.") as wd:
        db, cfg = history.seed(thermlog, wd)

        def cli(*args):
            p = subprocess.run([thermlog, "--db", db, "-c", cfg, "report", *args], capture_output=True)
            return p.returncode, p.stdout, p.stderr.decode()

        d = Daemon(thermlogd, wd, ["-c", cfg, "--sysfs-root", fixture, "--db", db,
                                   "--listen", "127.0.0.1:0"]).start()
        port = d.http_port()
        if not tap.ok(port, "the daemon serves HTTP", d.log_text()):
            return
        base = f"http://127.0.0.1:{port}/api/v1/report"

        def get(query):
            try:
                with urllib.request.urlopen(base + query, timeout=60) as r:
                    return r.status, dict(r.headers), r.read()
            except urllib.error.HTTPError as e:
                return e.code, dict(e.headers), e.read()

        window = f"from={T0}&to={T1}"
        cases = [
            (f"?{window}", ["--format", "html"], "text/html", "html", "report"),
            (f"?{window}&format=md", ["--format", "md"], "text/markdown", "md", "report"),
            (f"?{window}&lifetime=1", ["--format", "html", "--lifetime"], "text/html", "html", "report"),
            (f"?{window}&format=md&lifetime=1", ["--format", "md", "--lifetime"], "text/markdown", "md",
             "report"),
            (f"?{window}&lifetime=only", ["--format", "html", "--lifetime-only"], "text/html", "html",
             "capacitors"),
            (f"?{window}&format=md&lifetime=only&weight=time&over=30m",
             ["--format", "md", "--lifetime-only", "--weight", "time", "--over", "30m"], "text/markdown",
             "md", "capacitors"),
        ]
        for query, args, ctype, ext, kind in cases:
            # The in-service part's age is counted to the second: compare with the CLI just
            # before and just after the request, so a second (or an hour) turning between
            # them cannot make a difference.
            before = cli("--from", str(T0), "--to", str(T1), *args, "-o", "-")
            status, headers, body = get(query)
            after = cli("--from", str(T0), "--to", str(T1), *args, "-o", "-")
            same = body in (before[1], after[1])
            tap.ok(status == 200 and before[0] == 0 and same and len(body) > 2000,
                   f"GET {query} = thermlog report {' '.join(args)} -o - byte for byte",
                   (status, before[2], body[:300], before[1][:300]))
            disp = headers.get("Content-Disposition", "")
            tap.ok(headers.get("Content-Type", "").startswith(ctype) and
                   disp == f'attachment; filename="thermlog-{kind}-20260801T000000Z-20260804T000000Z.{ext}"'
                   and headers.get("Cache-Control") == "no-store",
                   f"GET {query}: {ctype} as an attachment named for the window",
                   (headers.get("Content-Type"), disp, headers.get("Cache-Control")))
        # The HTML the CLI writes to a file is the same document as its standard output.
        out = os.path.join(wd, "r.html")
        rc, _, err = cli("--from", str(T0), "--to", str(T1), "--lifetime", "-o", out)
        status, _, body = get(f"?{window}&lifetime=1")
        tap.ok(rc == 0 and open(out, "rb").read() == body, "GET ...&lifetime=1 = report --lifetime -o r.html", err)
        tap.ok(b"Capacitor design review: C30 bulk" in body and b"Review checklist" in body,
               "lifetime=1 holds the design review")
        _, _, md = get(f"?{window}&format=md&lifetime=only")
        tap.ok(b"(Chart left out: this Markdown came without its chart files" in md and b"<svg" not in md,
               "md over HTTP: the Markdown alone, and it says where the charts are")

        # Without a window: the whole history, named so.
        status, headers, body = get("?lifetime=only")
        tap.ok(status == 200 and headers.get("Content-Disposition", "").startswith(
            'attachment; filename="thermlog-capacitors-20260801T000000Z-') and b"C12 case" in body,
            "no window: the whole history", (status, headers.get("Content-Disposition")))

        # http.max_window bounds a report without a start too: the newest 30 days of a history
        # that began in August, and of one ending at 'to' alone; a shorter one stays whole.
        with open(cfg, "a") as f:
            f.write("http:\n  max_window: 30d\n")
        d.send(signal.SIGHUP)
        wait_for(lambda: "configuration reloaded" in d.log_text(), 30)
        for query in ("?lifetime=only", f"?lifetime=only&to={T1 + 60 * 86400}"):
            status, headers, _ = get(query)
            m = re.search(r'filename="thermlog-capacitors-(\w+)-(\w+)\.html"',
                          headers.get("Content-Disposition", ""))
            days = None
            if m:
                a, b = (datetime.datetime.strptime(x, "%Y%m%dT%H%M%SZ") for x in m.groups())
                days = (b - a).total_seconds() / 86400
            tap.ok(status == 200 and days is not None and 29 <= days <= 30,
                   f"GET {query} with http.max_window 30d: the newest 30 days", (status, m and m.groups()))
        status, headers, _ = get(f"?lifetime=only&to={T1}")
        tap.ok(status == 200 and headers.get("Content-Disposition", "").startswith(
            'attachment; filename="thermlog-capacitors-20260801T000000Z-'),
            "a history shorter than http.max_window stays whole", headers.get("Content-Disposition"))

        for query, param in (("?format=pdf", "format"), ("?lifetime=2", "lifetime"), ("?from=yesterdayish", "from"),
                             (f"?from={T1}&to={T0}", "from"), ("?to=soon", "to"), ("?over=abc", "over"),
                             ("?weight=heavy", "weight"), ("?label=", "label"), ("?label=nope", "label"),
                             ("?colour=red", "colour"), ("?format=md&format=html", "format"),
                             ("?from=2020-01-01", "from"), ("?peak_channel=thermal/nope", "peak_channel")):
            status, headers, body = get(query)
            try:
                err = json.loads(body)
            except ValueError:
                err = {}
            tap.ok(status == 400 and err.get("parameter") == param and param in err.get("error", ""),
                   f"GET {query}: 400 naming '{param}'", (status, body[:300]))
        status, _, body = get("?peak_channel=thermal/npu-thermal&format=md")
        tap.ok(status == 200 and "The channel --peak-channel chose, thermal/npu-thermal" in
               body.decode(), "GET ?peak_channel=: the peak of that channel, as --peak-channel",
               body[:300])


if __name__ == "__main__":
    main(run)
