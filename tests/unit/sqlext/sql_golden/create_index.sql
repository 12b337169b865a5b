CREATE INDEX IF NOT EXISTS idx_city ON TABLE db.trips USING column_stats (city) OPTIONS (expr = 'identity')
