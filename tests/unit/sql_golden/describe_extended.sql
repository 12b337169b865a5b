DESCRIBE EXTENDED analytics.trips
