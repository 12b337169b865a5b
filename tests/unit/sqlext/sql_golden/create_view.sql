CREATE OR REPLACE VIEW IF NOT EXISTS reports.fares (id COMMENT 'trip id', fare)
COMMENT 'fares by trip'
TBLPROPERTIES ('owner' = 'bi')
AS SELECT uuid,  fare FROM trips WHERE fare > 5
