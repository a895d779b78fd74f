extension Document {
    /// Runs `body` on the document's queue, where every call it makes on the document is a plain call.
    ///
    /// Each call an app awaits on a document from elsewhere moves to the document's queue and back (see
    /// ``unownedExecutor``): a few microseconds, nothing for a keystroke, but most of the cost of applying thousands
    /// of edits one `await` at a time. A run of calls inside one `perform` pays for one move:
    ///
    /// ```swift
    /// try await document.perform { document in
    ///     for line in imported { try document.edit(.insert(at: document.model.scalarCount, text: line)) }
    ///     try document.commit()
    /// }
    /// ```
    ///
    /// - Throws: whatever `body` throws.
    public func perform<Result: Sendable>(_ body: @Sendable (isolated Document) throws -> Result) rethrows -> Result {
        try body(self)
    }
}
