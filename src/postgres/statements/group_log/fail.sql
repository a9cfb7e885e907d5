SELECT tributary.consumer_fail($1, $2::uuid, $3)
