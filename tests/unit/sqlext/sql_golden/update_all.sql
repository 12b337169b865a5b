UPDATE trips SET fare = 0
