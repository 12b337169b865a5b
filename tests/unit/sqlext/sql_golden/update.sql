UPDATE trips SET fare = fare * 1.1, rider = 'r-1' WHERE city = 'sf' AND ts > 100
