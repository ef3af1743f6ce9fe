-- Record: the value at the done-marker key KEYS[1] (a record stored by
-- ReleaseRecord, or the fence of ReleaseDone), or nil. Read-only.
return redis.call('GET', KEYS[1])
