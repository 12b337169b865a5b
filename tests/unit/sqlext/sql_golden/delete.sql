DELETE FROM trips WHERE rider IN ('rider-A', 'rider-C')
