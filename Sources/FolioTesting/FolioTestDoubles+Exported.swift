// The test doubles (a fault-injecting file system, an in-memory network with faults) are part of what this module
// offers; they live in a module that does not link the Testing library, so that the simulator can use them in a
// shipped tool. Importing FolioTesting imports them too.
@_exported import FolioTestDoubles
