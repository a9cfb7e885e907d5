SELECT tributary.group_delete($1)
