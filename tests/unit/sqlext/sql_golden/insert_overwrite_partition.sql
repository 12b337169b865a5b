INSERT OVERWRITE TABLE txns PARTITION (region = 'eu', day) SELECT txn_id, amount, day FROM staging WHERE region = 'eu'
