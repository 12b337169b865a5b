DESC trips
