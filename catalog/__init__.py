"""Table catalog in the warehouse folder (issue: SQL extension and catalog)."""
