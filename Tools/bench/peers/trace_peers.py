"""Replays an editing trace with loro and pycrdt (the peers Folio is compared with) and prints one JSON line.

Usage: trace_peers.py NAME   (reads Benchmarks/traces/NAME.json.gz; positions are Unicode scalars)
Keys: loro_per_patch_ms, loro_single_commit_ms, loro_snapshot_bytes, pycrdt_ms, text_ok; medians of 5 runs.
"""
import gzip
import json
import pathlib
import statistics
import sys
import time

from loro import ExportMode, LoroDoc
from pycrdt import Doc, Text

ROUNDS = 5


def load(name):
    path = pathlib.Path(__file__).resolve().parents[3] / "Benchmarks" / "traces" / f"{name}.json.gz"
    with gzip.open(path, "rt", encoding="utf-8") as handle:
        trace = json.load(handle)
    patches = [tuple(p) for t in trace["txns"] for p in t["patches"]]
    return patches, trace["endContent"]


def loro_run(patches, commit_each):
    doc = LoroDoc()
    text = doc.get_text("text")
    start = time.perf_counter()
    for position, deleted, inserted in patches:
        if deleted:
            text.delete(position, deleted)
        if inserted:
            text.insert(position, inserted)
        if commit_each:
            doc.commit()
    doc.commit()
    elapsed = (time.perf_counter() - start) * 1000
    return elapsed, text.to_string(), doc


def pycrdt_run(patches):
    # Yrs counts UTF-8 bytes by default; the traces used here are ASCII, where bytes and scalars agree.
    doc = Doc()
    text = Text()
    doc["text"] = text
    start = time.perf_counter()
    for position, deleted, inserted in patches:
        if deleted:
            del text[position:position + deleted]
        if inserted:
            text.insert(position, inserted)
    elapsed = (time.perf_counter() - start) * 1000
    return elapsed, str(text)


def main():
    patches, end = load(sys.argv[1])
    per_patch, single, pycrdt_times = [], [], []
    ok = True
    snapshot_bytes = 0
    for _ in range(ROUNDS):
        elapsed, result, doc = loro_run(patches, commit_each=True)
        per_patch.append(elapsed)
        ok = ok and result == end
        snapshot_bytes = len(doc.export(ExportMode.Snapshot()))
        elapsed, result, _ = loro_run(patches, commit_each=False)
        single.append(elapsed)
        ok = ok and result == end
    for _ in range(3):
        elapsed, result = pycrdt_run(patches)
        pycrdt_times.append(elapsed)
        ok = ok and result == end
    print(json.dumps({
        "loro_per_patch_ms": round(statistics.median(per_patch), 1),
        "loro_single_commit_ms": round(statistics.median(single), 1),
        "loro_snapshot_bytes": snapshot_bytes,
        "pycrdt_ms": round(statistics.median(pycrdt_times), 1),
        "text_ok": ok,
    }, sort_keys=True))


if __name__ == "__main__":
    main()
