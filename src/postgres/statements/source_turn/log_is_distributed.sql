SELECT tributary.log_is_distributed()
