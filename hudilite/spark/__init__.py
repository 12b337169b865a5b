"""The only pyspark-aware part of the engine: session set-up and the Arrow bridge."""
