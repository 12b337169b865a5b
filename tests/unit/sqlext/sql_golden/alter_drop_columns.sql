ALTER TABLE trips DROP COLUMNS (fare, rider)
