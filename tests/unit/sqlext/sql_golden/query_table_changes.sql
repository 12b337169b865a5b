SELECT * FROM hudi_table_changes('trips', 'latest_state', '20240101000000000')
