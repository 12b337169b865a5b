INSERT INTO trips (uuid, ts, fare, city) VALUES ('a', 1, 9.5, 'sf'), ('b', 2, CAST('1.5' AS DOUBLE), 'la')
