#!/usr/bin/env python3
"""The runs socket's group, with a real thermlogd on a copied fixture tree (rock5c), its socket
in a temp dir and HTTP on port 0.

- As an unprivileged user with no other group (the unit's case: User= and Group=, no
  capabilities), chown() could give the socket no other group: it keeps the daemon's group,
  is 0660, and no NSS module is loaded to name a group (they would stay mapped for the
  daemon's life).
- As root, the socket is given to group thermlog when that group exists, else it stays root's
  with a warning; 0660 either way.

usage: test-socket-group.py THERMLOGD FIXTURES_DIR   (needs root to switch users; skips else)
"""
import grp
import os
import shutil
import stat
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from thermlog_test import Daemon, Workdir, main, write_config  # noqa: E402

THERMLOGD, FIXTURES = sys.argv[1], sys.argv[2]
NOBODY = 65534  # uid and gid: numbers, so the test needs no user database either


def start(tmp, name, prefix=()):
    """A daemon on a copy of rock5c in tmp/NAME; returns (daemon, socket path, log text)."""
    base = os.path.join(tmp, name)
    os.mkdir(base)
    tree = os.path.join(base, "rock5c")
    shutil.copytree(os.path.join(FIXTURES, "rock5c"), tree, symlinks=True)
    sock = os.path.join(base, "run", "thermlog.sock")
    cfg = write_config(os.path.join(base, "thermlog.yaml"), extra=(
        f"sysfs_root: {tree}\nprocfs_root: {tree}/proc\ndatabase: {base}/thermlog.db\n"
        f"http:\n  listen: 127.0.0.1:0\nruns:\n  socket: {sock}\n"))
    if prefix:
        for root, dirs, files in os.walk(base):
            for n in [root] + [os.path.join(root, f) for f in dirs + files]:
                os.lchown(n, NOBODY, NOBODY)
    args = [*prefix[1:], THERMLOGD, "-c", cfg] if prefix else ["-c", cfg]
    d = Daemon(prefix[0] if prefix else THERMLOGD, base, args).start()
    deadline = time.time() + 30
    while time.time() < deadline and d.alive():
        text = d.log_text()
        if "runs: listening on" in text and "first cycle stored" in text:
            break
        time.sleep(0.05)
    return d, sock, d.log_text()


def nss_modules(pid):
    with open(f"/proc/{pid}/maps") as f:
        return sorted({line.split()[-1] for line in f if "libnss_" in line})


def test(t):
    if os.geteuid() != 0:
        print("1..0 # SKIP switching to an unprivileged user needs root")
        sys.exit(0)
    with Workdir("thermlog-sockgroup-") as tmp:
        os.chmod(tmp, 0o755)
        setpriv = shutil.which("setpriv")
        if not t.ok(setpriv, "setpriv (util-linux) is installed"):
            return
        # The unit's case: one group, no capabilities.
        d, sock, log = start(tmp, "unprivileged", (setpriv, f"--reuid={NOBODY}",
                                                    f"--regid={NOBODY}", "--clear-groups"))
        if t.ok(d.alive() and os.path.exists(sock), "the unprivileged daemon listens", log):
            st = os.stat(sock)
            t.ok(stat.S_IMODE(st.st_mode) == 0o660, "its socket is 0660", oct(st.st_mode))
            t.ok(st.st_gid == NOBODY, "its socket keeps the daemon's group", st.st_gid)
            t.ok(nss_modules(d.proc.pid) == [], "no NSS module is loaded",
                 nss_modules(d.proc.pid))
            t.ok("group thermlog" not in log and "no group" not in log,
                 "no warning about the group", log)
        d.stop()
        # Root: the group is looked up by name.
        d, sock, log = start(tmp, "root")
        if t.ok(d.alive() and os.path.exists(sock), "the daemon run as root listens", log):
            st = os.stat(sock)
            t.ok(stat.S_IMODE(st.st_mode) == 0o660, "its socket is 0660", oct(st.st_mode))
            try:
                want = grp.getgrnam("thermlog").gr_gid
            except KeyError:
                want = None
            if want is None:
                t.ok(st.st_gid == os.getegid() and "no group 'thermlog'" in log,
                     "without a group thermlog the socket stays root's, with a warning",
                     f"gid {st.st_gid}\n{log}")
            else:
                t.ok(st.st_gid == want, "the socket is given to group thermlog", st.st_gid)
        d.stop()


main(test)
