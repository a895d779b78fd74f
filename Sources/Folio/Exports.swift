// `import Folio` is all an app needs: documents, their models, saving, conflicts and sync.
// The smaller modules stay available to programs that want less.
@_exported import FolioClient
@_exported import FolioConflicts
@_exported import FolioCore
@_exported import FolioDocuments
@_exported import FolioFiles
@_exported import FolioMerge
@_exported import FolioModels
@_exported import FolioStore
@_exported import FolioSync
