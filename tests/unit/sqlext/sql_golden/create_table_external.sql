CREATE TABLE ext_trips USING hudi OPTIONS (primaryKey 'uuid', 'hoodie.metadata.enable' = 'false') TBLPROPERTIES (type = 'mor', preCombineField = 'ts') LOCATION 's3://bucket/trips'
