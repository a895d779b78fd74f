"""The concurrent-trace benchmark's peer: loro replays a concurrent editing trace, one peer per agent.

Usage: concurrent_trace_peers.py [PATH]   (default Benchmarks/traces/friendsforever.json.gz; positions are Unicode scalars)
Each agent is a device with a LoroDoc of its own (peer id agent + 1). A transaction is typed on exactly the version of
its parents: directly when the agent's doc is at that version, else after the agent's doc imports the missing changes
from a main doc holding everything so far (or, when the agent's doc is past that version, on a fork of the main doc at
it). Every new change is then imported into the main doc, which stays detached (history only) until the end.
Keys: text_ok, loro_ms (the whole replay), loro_import_ms (a fresh doc imports all updates and reads the text),
loro_snapshot_bytes, loro_snapshot_load_ms (a fresh doc imports the snapshot and reads the text), transactions,
agents, final_chars; times are medians of 5 runs.
"""
import gzip
import json
import pathlib
import statistics
import sys
import time

from loro import ID, ExportMode, Frontiers, LoroDoc, VersionVector

ROUNDS = 5


def load(path):
    with gzip.open(path, "rt", encoding="utf-8") as handle:
        return json.load(handle)


def apply(doc, patches):
    text = doc.get_text("text")
    for position, deleted, inserted in patches:
        if deleted:
            text.delete(position, deleted)
        if inserted:
            text.insert(position, inserted)
    doc.commit()


def replay(trace):
    """Returns the main doc after replaying every transaction, and how many were typed on a fork."""
    main = LoroDoc()
    main.peer_id = 0
    base = Frontiers()
    if trace.get("startContent"):
        apply(main, [(0, 0, trace["startContent"])])
        base = main.oplog_frontiers
    start = main.export(ExportMode.Snapshot())
    main.detach()  # the main doc stores the history; its text is computed once, at the end
    docs = {}  # agent -> its LoroDoc
    at = {}  # agent -> the transactions forming its doc's frontier (empty: the start)
    ids = []  # transaction -> the IDs of its version: its last op, or its parents' for a transaction without patches
    forks = 0
    for index, txn in enumerate(trace["txns"]):
        agent, parents = txn["agent"], frozenset(txn["parents"])
        if agent not in docs:
            docs[agent] = LoroDoc()
            docs[agent].import_(start)
            docs[agent].peer_id = agent + 1
            at[agent] = frozenset()
        doc = docs[agent]
        if parents != at[agent]:
            version = [i for p in parents for i in ids[p]]
            frontiers = Frontiers.from_ids(version) if version else base
            target = main.frontiers_to_vv(frontiers)
            if target.includes_vv(doc.oplog_vv):
                doc.import_(main.export(ExportMode.UpdatesInRange(target.sub_iter(doc.oplog_vv))))
            else:
                doc = main.fork_at(frontiers)
                forks += 1
        before = doc.oplog_vv
        apply(doc, txn["patches"])
        if txn["patches"]:
            ids.append([ID(doc.peer_id, doc.oplog_vv.get_last(doc.peer_id))])
        else:
            ids.append([i for p in parents for i in ids[p]])
        main.import_(doc.export(ExportMode.Updates(before)))
        if doc is docs[agent]:
            at[agent] = frozenset([index])
    main.checkout_to_latest()
    return main, forks


def timed_load(blob):
    start = time.perf_counter()
    doc = LoroDoc()
    doc.import_(blob)
    text = doc.get_text("text").to_string()
    return (time.perf_counter() - start) * 1000, text


def main():
    root = pathlib.Path(__file__).resolve().parents[3]
    path = sys.argv[1] if len(sys.argv) > 1 else root / "Benchmarks" / "traces" / "friendsforever.json.gz"
    trace = load(path)
    end = trace["endContent"]
    replays, imports, loads = [], [], []
    ok = True
    for _ in range(ROUNDS):
        start = time.perf_counter()
        doc, forks = replay(trace)
        replays.append((time.perf_counter() - start) * 1000)
        ok = ok and doc.get_text("text").to_string() == end
    updates = doc.export(ExportMode.Updates(VersionVector()))
    snapshot = doc.export(ExportMode.Snapshot())
    for _ in range(ROUNDS):
        elapsed, text = timed_load(updates)
        imports.append(elapsed)
        ok = ok and text == end
        elapsed, text = timed_load(snapshot)
        loads.append(elapsed)
        ok = ok and text == end
    agents = len({txn["agent"] for txn in trace["txns"]})
    print(f"loro: {len(trace['txns'])} transactions by {agents} agents, {forks} typed on a fork; "
          f"updates {len(updates)} bytes, snapshot {len(snapshot)} bytes", file=sys.stderr)
    print(json.dumps({
        "text_ok": ok,
        "loro_ms": round(statistics.median(replays), 1),
        "loro_import_ms": round(statistics.median(imports), 2),
        "loro_snapshot_bytes": len(snapshot),
        "loro_snapshot_load_ms": round(statistics.median(loads), 2),
        "transactions": len(trace["txns"]),
        "agents": agents,
        "final_chars": len(end),
    }))


if __name__ == "__main__":
    main()
