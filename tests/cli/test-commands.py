#!/usr/bin/python3
"""Every command reads its set-up from the command table (src/cli/command.c): an operand a
command does not take is refused alike everywhere (the message, then the usage, exit 2); --help
and usage errors need no database; a command that reads the database says there is none and
creates none; one that writes an existing one (repair) creates none either; import creates it.
(TAP)

usage: test-commands.py THERMLOG
"""
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from thermlog_test import done, ok  # noqa: E402

thermlog = sys.argv[1]
tmp = tempfile.mkdtemp(prefix="thermlog-commands-")
cfg = os.path.join(tmp, "empty.yaml")
open(cfg, "w").close()
missing = os.path.join(tmp, "missing.db")


def run(*args, db=missing):
    return subprocess.run([thermlog, "-c", cfg, "--db", db, *args], capture_output=True,
                          text=True, timeout=60)


# Commands (and subcommands) that take no operand, with the options they need to get that far.
NO_OPERAND = [["sample"], ["stats"], ["peak", "--channel", "x"], ["channels"], ["export"],
              ["repair", "--drop-after", "now"], ["lifetime"], ["lifetime", "profile"],
              ["lifetime", "calc", "--rated-life-h", "2000", "--rated-temp-c", "105"],
              ["runs"], ["runs", "stats"], ["throttle"], ["report", "-o", "-"]]
for args in NO_OPERAND:
    p = run(*args, "extra")
    name = " ".join(a for a in args if not a.startswith("-") and a not in
                    ("x", "now", "2000", "105"))
    ok(p.returncode == 2 and p.stderr.startswith(
        "thermlog %s: unexpected argument 'extra'\nusage: " % name) and p.stdout == "",
       "thermlog %s extra: refused alike, the usage after the message" % name, p.stderr)
    ok(not os.path.exists(missing), "... and no database created", missing)

for args in (["stats"], ["runs", "stats"], ["lifetime", "profile"], ["throttle"], ["export"],
             ["backup", os.path.join(tmp, "copy.db")]):
    p = run(*args, "--help") if args[0] != "backup" else run("backup", "--help")
    ok(p.returncode == 0 and p.stdout.startswith("usage: ") and not os.path.exists(missing),
       "thermlog %s --help needs no database" % " ".join(args[:2]), p.stderr)
    p = run(*args)
    ok(p.returncode == 1 and "no database at %s" % missing in p.stderr
       and not os.path.exists(missing),
       "thermlog %s without a database: said, none created" % " ".join(args[:2]), p.stderr)

p = run("repair", "--drop-after", "now")
ok(p.returncode == 1 and "thermlog repair: no database at" in p.stderr
   and not os.path.exists(missing), "repair writes only into an existing database", p.stderr)
csv = os.path.join(tmp, "h.csv")
with open(csv, "w") as f:
    f.write("time,channel,value,unit\n1785542400,thermal/a,40.5,celsius\n")
p = run("import", csv)
ok(p.returncode == 0 and os.path.exists(missing), "import creates the database", p.stderr)
p = run("repair", "--drop-after", "2030-01-01", "--dry-run")
ok(p.returncode == 0 and "nothing to remove" in p.stdout, "repair opens the existing one",
   p.stdout + p.stderr)
p = run("runs", "stats", "--label", "x")
ok(p.returncode == 1 and p.stderr == "thermlog runs stats: no run has the label 'x'\n",
   "a subcommand's messages carry its name", p.stderr)
p = subprocess.run([thermlog, "-c", os.path.join(tmp, "nope.yaml"), "stats"],
                   capture_output=True, text=True, timeout=60)
ok(p.returncode == 2 and "nope.yaml" in p.stderr, "a configuration that does not load: exit 2",
   p.stderr)
sys.exit(done())
