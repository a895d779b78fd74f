// The file system documents are saved through (`FileSystem`, `PosixFileSystem`, `FileSystemError`) is part of this
// module's API: `DocumentLibrary` and `SavePipeline` take one, and `SaveError` carries its errors. Importing
// FolioDocuments imports it too.
@_exported import FolioFiles
