#!/usr/bin/python3
"""Counts results across meson testlog.json files and prints the closing 'N passed, N failed' line.

A TAP test counts each of its subtests; a test without subtests counts once.
"""
import json
import sys

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
print(f"{passed} passed, {failed} failed, {skipped} skipped")
sys.exit(1 if failed or passed == 0 else 0)
