"""SQL front end over hudilite tables (issue: SQL extension and catalog)."""
