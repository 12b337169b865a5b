SHOW VIEWS IN reports LIKE 'fa*|b*'
