SELECT tributary.consumer_extend($1, $2::uuid)
