-- COW table with a nested schema, Hudi's bare keys and quoted keys
CREATE TABLE IF NOT EXISTS sales.orders (
    id INT NOT NULL COMMENT 'order id',
    customer STRING,
    total DECIMAL(10,2),
    ts LONG,
    items ARRAY<STRUCT<sku: STRING, qty: INT>>,
    attrs MAP<STRING, STRING>,
    day DATE
) USING HUDI
PARTITIONED BY (day)
LOCATION '/data/orders'
TBLPROPERTIES (
    type = 'cow',
    primaryKey = 'id',
    preCombineField = 'ts',
    'hoodie.metadata.enable' = 'false'
)
