WITH recent AS (SELECT * FROM trips WHERE ts > 100) SELECT city, count(*) AS n FROM recent JOIN cities USING (city) GROUP BY city ORDER BY n DESC LIMIT 10
