CALL system.show_commits('trips', 10)
