RESET hoodie.spark.sql.insert.into.operation
