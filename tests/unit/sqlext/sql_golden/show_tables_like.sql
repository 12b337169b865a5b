SHOW TABLES FROM sales LIKE 'trips*'
