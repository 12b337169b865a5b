ALTER TABLE trips DROP PARTITION (city = 'sf', year = 2024)
