CREATE TABLE trips (uuid STRING, ts BIGINT, fare DOUBLE, city STRING) USING hudilite PARTITIONED BY (city) WITH ('primaryKey'='uuid', 'preCombineField'='ts', 'type'='mor')
