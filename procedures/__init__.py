"""CALL procedures with Hudi's names (issue: CALL procedures)."""
