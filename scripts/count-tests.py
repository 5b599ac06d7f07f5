#!/usr/bin/python3
"""Counts results across meson testlog.json files and prints the closing 'N passed, N failed' line.

A TAP test counts each of its subtests; a test without subtests counts once. A failed test's
own account (its "not ok" lines and their diagnostics) follows its FAILED line.
"""
import json
import sys


def why(out, most=12):
    """A failed test's own account, for the end of the log: its "not ok" lines with the
    diagnostics under them, or else the last lines it printed; at most @most lines."""
    lines = out.splitlines()
    picked, keep = [], False
    for line in lines:
        if line.startswith("not ok"):
            keep = True
        elif not line.startswith("#"):
            keep = False
        if keep:
            picked.append(line[:200])
    return (picked or [x[:200] for x in lines[-most:]])[:most]


passed = failed = skipped = 0
for path in sys.argv[1:]:
    try:
        lines = open(path, encoding="utf-8").read().splitlines()
    except OSError as e:
        print(f"count-tests: {path}: {e}", file=sys.stderr)
        failed += 1
        continue
    for line in lines:
        if not line.strip():
            continue
        t = json.loads(line)
        result = t.get("result")
        if result in ("OK", "EXPECTEDFAIL"):
            passed += 1
        elif result == "SKIP":
            skipped += 1
        else:
            failed += 1
            print(f"FAILED: {t.get('name')} ({result}) in {path}", file=sys.stderr)
            for line in why(t.get("stdout") or ""):
                print("    " + line, file=sys.stderr)
print(f"{passed} passed, {failed} failed, {skipped} skipped")
sys.exit(1 if failed or passed == 0 else 0)
