ALTER TABLE trips RENAME TO analytics.trips_v2
