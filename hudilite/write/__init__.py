"""The write path: planning on the driver, per-file-group work in executors, the commit."""
