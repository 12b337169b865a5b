SHOW TABLES IN analytics
