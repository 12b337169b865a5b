INSERT OVERWRITE trips SELECT * FROM trips_backup
