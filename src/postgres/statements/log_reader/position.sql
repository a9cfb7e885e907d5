SELECT tx_id::text, seq FROM tributary.log_position($1)
