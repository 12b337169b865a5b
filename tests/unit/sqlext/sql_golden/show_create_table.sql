SHOW CREATE TABLE analytics.trips
