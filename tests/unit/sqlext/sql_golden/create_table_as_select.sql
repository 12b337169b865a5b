CREATE TABLE IF NOT EXISTS db.top_trips USING hudi OPTIONS (primaryKey = 'uuid', orderingFields = 'ts') AS SELECT uuid, ts, fare FROM trips WHERE fare > 10
