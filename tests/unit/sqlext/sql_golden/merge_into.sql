MERGE INTO trips AS t
USING (SELECT uuid, ts, fare, city, op FROM updates) AS s
ON t.uuid = s.uuid
WHEN MATCHED AND s.op = 'delete' THEN DELETE
WHEN MATCHED AND s.ts > t.ts THEN UPDATE SET fare = s.fare, ts = s.ts
WHEN MATCHED THEN UPDATE SET *
WHEN NOT MATCHED AND s.op <> 'delete' THEN INSERT (uuid, ts, fare, city) VALUES (s.uuid, s.ts, s.fare, s.city)
WHEN NOT MATCHED THEN INSERT *
