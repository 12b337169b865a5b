"""Indexes: where a record key already lives (simple index in the Spark job, bucket index here)."""
