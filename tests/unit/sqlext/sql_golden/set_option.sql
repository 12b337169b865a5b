SET hoodie.spark.sql.insert.into.operation = bulk_insert
