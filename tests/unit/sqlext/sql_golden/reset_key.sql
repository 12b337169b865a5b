RESET spark.sql.shuffle.partitions
