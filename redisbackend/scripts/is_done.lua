-- IsDone: 1 when the done marker KEYS[1] exists, else 0. Read-only.
return redis.call('EXISTS', KEYS[1])
