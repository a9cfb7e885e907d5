SELECT tributary.consumer_ack($1, $2::uuid)
