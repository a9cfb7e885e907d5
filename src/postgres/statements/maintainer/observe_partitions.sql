-- The rate of transaction ids, and what each partition holds once sealed.
SELECT tributary.observe_partitions()
