ALTER TABLE trips SET TBLPROPERTIES ('hoodie.keep.max.commits' = '40', 'comment' = 'trips')
