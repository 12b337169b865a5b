CALL run_clustering(table => 'v9_txns_cow_simple_nometa')
