DROP INDEX IF EXISTS idx_city ON trips
