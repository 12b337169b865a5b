"""Table services: compaction, cleaning, rollback, savepoints (merge-on-read issue)."""
