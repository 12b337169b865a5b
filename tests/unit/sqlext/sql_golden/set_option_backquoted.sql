SET `hoodie.table.name` = "trips table"
