-- A merge-on-read table's day: write, compact, savepoint, undo a mistake, clean, inspect.
-- Run it with:  hudilite sql --warehouse ./hudilite-warehouse -f examples/runbook.sql
DROP TABLE IF EXISTS rides;

CREATE TABLE rides (ride_id STRING, ts BIGINT, fare DOUBLE, city STRING) USING hudi
PARTITIONED BY (city)
TBLPROPERTIES (
  primaryKey = 'ride_id',
  preCombineField = 'ts',
  type = 'mor',
  'hoodie.clean.automatic' = 'false'
);

INSERT INTO rides VALUES ('r1', 1, 10.0, 'sf'), ('r2', 1, 20.0, 'nyc'), ('r3', 1, 30.0, 'sf');
UPDATE rides SET fare = fare + 1, ts = 2 WHERE city = 'sf';      -- log files on MOR

-- Compaction: plan it, look at the plan, run it.
CALL run_compaction(op => 'schedule', table => 'rides');
CALL show_compaction(table => 'rides');
CALL run_compaction(op => 'run', table => 'rides');

-- Savepoint the good state, then make a mistake ...
CALL create_savepoint(table => 'rides');
DELETE FROM rides WHERE city = 'sf';
SELECT ride_id, fare FROM rides ORDER BY ride_id;

-- ... and undo it.
CALL rollback_to_savepoint(table => 'rides');
SELECT ride_id, fare, city FROM rides ORDER BY ride_id;

-- Keep only the newest version of each file group; older ones go.
CALL delete_savepoint(table => 'rides');
CALL run_clean(table => 'rides', clean_policy => 'KEEP_LATEST_FILE_VERSIONS', file_versions_retained => 1);

CALL show_commits(table => 'rides', limit => 10);
