SET hoodie.spark.sql.insert.into.operation = insert
