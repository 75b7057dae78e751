import Foundation

/// Held while a test creates a child's pipes or terminal and spawns it, until
/// the parent has closed the child's ends: descriptors are made close-on-exec
/// only after they exist, so without this lock a child spawned by a test running
/// in parallel could inherit them, and a reader would never see end-of-file.
let childSpawnLock = NSLock()
