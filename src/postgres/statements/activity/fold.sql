-- Folds about $1 more events into the console's per-minute counts; how many.
SELECT tributary.activity_fold($1)
