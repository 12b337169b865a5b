CALL run_compaction(op => 'schedule', table => 'db.trips', limit => -1, dry => false, path => NULL)
