"""The catch-up benchmark's peer: what a new loro peer receives to catch up on a concurrent editing trace.

Usage: catch_up_peers.py [PATH]   (default Benchmarks/traces/friendsforever.json.gz)
The trace is replayed as concurrent_trace_peers.py replays it (one peer per agent, each transaction typed at its
parents); a new peer then receives the whole history as loro's update export (`ExportMode.Updates` from the empty
version) and imports it.
Keys: loro_update_bytes (the update export), loro_snapshot_bytes (the snapshot, for comparison), text_ok (the new
peer's text is the trace's end content), transactions.
"""
import json
import pathlib
import sys

from loro import ExportMode, LoroDoc, VersionVector

from concurrent_trace_peers import load, replay


def main():
    root = pathlib.Path(__file__).resolve().parents[3]
    path = sys.argv[1] if len(sys.argv) > 1 else root / "Benchmarks" / "traces" / "friendsforever.json.gz"
    trace = load(path)
    doc, _ = replay(trace)
    updates = doc.export(ExportMode.Updates(VersionVector()))
    snapshot = doc.export(ExportMode.Snapshot())
    peer = LoroDoc()
    peer.import_(updates)
    ok = peer.get_text("text").to_string() == trace["endContent"]
    print(f"loro: a new peer imports {len(updates)} bytes of updates (snapshot {len(snapshot)} bytes)", file=sys.stderr)
    print(json.dumps({
        "loro_update_bytes": len(updates),
        "loro_snapshot_bytes": len(snapshot),
        "text_ok": ok,
        "transactions": len(trace["txns"]),
    }))


if __name__ == "__main__":
    main()
