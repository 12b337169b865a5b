SHOW TBLPROPERTIES db.trips ('hoodie.table.type')
