SET spark.app.note = a note with spaces, SELECT and FROM
