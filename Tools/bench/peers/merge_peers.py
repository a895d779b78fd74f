"""The merge benchmark's peer: loro forks the trace, both sides edit apart, one imports the other's changes.

Usage: merge_peers.py NAME FORK COUNT THEIRS.json   (THEIRS: the other side's patches, as Folio made them)
Prints one JSON line: loro_ms (median of 5 imports), text_ok.
"""
import gzip
import json
import pathlib
import statistics
import sys
import time

from loro import ExportMode, LoroDoc


def apply(text, patches):
    for position, deleted, inserted in patches:
        if deleted:
            text.delete(position, deleted)
        if inserted:
            text.insert(position, inserted)


def main():
    name, fork, count, theirs_path = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
    path = pathlib.Path(__file__).resolve().parents[3] / "Benchmarks" / "traces" / f"{name}.json.gz"
    with gzip.open(path, "rt", encoding="utf-8") as handle:
        trace = json.load(handle)
    patches = [tuple(p) for t in trace["txns"] for p in t["patches"]]
    theirs = [tuple(p) for p in json.load(open(theirs_path))]
    times, ok = [], True
    for _ in range(5):
        a = LoroDoc()
        apply(a.get_text("text"), patches[:fork])
        a.commit()
        b = LoroDoc()
        b.import_(a.export(ExportMode.Snapshot()))
        fork_version = b.oplog_vv
        apply(a.get_text("text"), patches[fork:fork + count])
        a.commit()
        apply(b.get_text("text"), theirs)
        b.commit()
        update = b.export(ExportMode.Updates(fork_version))
        start = time.perf_counter()
        a.import_(update)
        text = a.get_text("text").to_string()
        times.append((time.perf_counter() - start) * 1000)
        expected = sum(len(p[2]) - p[1] for p in patches[:fork + count]) + len(theirs)
        ok = ok and len(text) == expected
    print(json.dumps({"loro_ms": round(statistics.median(times), 2), "text_ok": ok}, sort_keys=True))


if __name__ == "__main__":
    main()
