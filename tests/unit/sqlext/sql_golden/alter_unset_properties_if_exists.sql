ALTER TABLE db.trips UNSET TBLPROPERTIES IF EXISTS ('hoodie.keep.min.commits', hoodie.keep.max.commits)
