SELECT uuid, fare FROM trips TIMESTAMP AS OF '2024-01-15 10:30:00' WHERE city = 'sf'
