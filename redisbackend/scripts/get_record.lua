-- Record: the record ReleaseRecord stored at the record key KEYS[1]
-- ("<prefix>:record:<lock key>"), or nil. Read-only.
return redis.call('GET', KEYS[1])
