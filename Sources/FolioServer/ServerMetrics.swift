import Metrics
import Prometheus

/// The server's counters, gauges and timers (swift-metrics), kept in a registry of the server's own and exposed in
/// Prometheus' text format at `GET /metrics`.
///
/// The registry is the server's, not the process's global one, so that several servers in one process (tests)
/// count apart.
final class ServerMetrics: Sendable {
    let registry = PrometheusCollectorRegistry()
    let connectionsOpened: Metrics.Counter
    let connectionsOpen: Metrics.Meter
    let connectionsRefused: Metrics.Counter
    let connectionsClosedForErrors: Metrics.Counter
    let changesIn: Metrics.Counter
    let changesOut: Metrics.Counter
    let bytesIn: Metrics.Counter
    let bytesOut: Metrics.Counter
    let sessions: Metrics.Counter
    let syncDuration: Metrics.Timer
    let ingestBatches: Metrics.Counter
    /// Presence frames queued for a recipient (one per recipient).
    let presenceRelayed: Metrics.Counter
    /// Presence frames dropped: from a sender past its rate or its documents, or for a recipient behind in reading
    /// (one per recipient).
    let presenceDropped: Metrics.Counter
    /// Blobs stored from devices.
    let blobsIn: Metrics.Counter
    /// Blobs sent to devices that asked for them.
    let blobsOut: Metrics.Counter

    init() {
        let factory = PrometheusMetricsFactory(registry: registry)
        connectionsOpened = Metrics.Counter(label: "folio_connections_opened_total", factory: factory)
        connectionsOpen = Metrics.Meter(label: "folio_connections_open", factory: factory)
        connectionsRefused = Metrics.Counter(label: "folio_connections_refused_total", factory: factory)
        connectionsClosedForErrors = Metrics.Counter(
            label: "folio_connections_closed_for_errors_total", factory: factory)
        changesIn = Metrics.Counter(label: "folio_changes_in_total", factory: factory)
        changesOut = Metrics.Counter(label: "folio_changes_out_total", factory: factory)
        bytesIn = Metrics.Counter(label: "folio_bytes_in_total", factory: factory)
        bytesOut = Metrics.Counter(label: "folio_bytes_out_total", factory: factory)
        sessions = Metrics.Counter(label: "folio_sync_sessions_total", factory: factory)
        syncDuration = Metrics.Timer(label: "folio_sync_duration_seconds", factory: factory)
        ingestBatches = Metrics.Counter(label: "folio_ingest_batches_total", factory: factory)
        presenceRelayed = Metrics.Counter(label: "folio_presence_relayed_total", factory: factory)
        presenceDropped = Metrics.Counter(label: "folio_presence_dropped_total", factory: factory)
        blobsIn = Metrics.Counter(label: "folio_blobs_in_total", factory: factory)
        blobsOut = Metrics.Counter(label: "folio_blobs_out_total", factory: factory)
    }

    /// The registry in Prometheus' text exposition format, followed by the storage's outages (a count the storage
    /// keeps, read when asked for).
    func exposition(storageOutages: UInt64) -> [UInt8] {
        registry.emitToBuffer()
            + Array("# TYPE folio_storage_outages_total counter\nfolio_storage_outages_total \(storageOutages)\n".utf8)
    }
}
