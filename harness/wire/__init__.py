"""The wire: the device protocol (:mod:`harness.wire.text`), byte transports (:mod:`harness.wire.transports`),
the real-time clock that waits on their file descriptors (:mod:`harness.wire.realtime`) and serial traces
(:mod:`harness.wire.trace`). Knows nothing of the model, the server or the judge."""
