ALTER VIEW fares AS SELECT uuid FROM trips_rt
