ALTER TABLE sales.orders UNSET TBLPROPERTIES IF EXISTS ('hoodie.cleaner.commits.retained', 'note')
