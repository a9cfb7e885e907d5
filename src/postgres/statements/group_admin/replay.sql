SELECT tributary.dead_letter_replay($1, $2)
