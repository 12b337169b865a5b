DROP VIEW IF EXISTS reports.fares
