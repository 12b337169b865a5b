SET hoodie.datasource.write.precombine.field='ts'
