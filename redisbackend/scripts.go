package redisbackend

import (
	_ "embed"

	"github.com/redis/go-redis/v9"
)

// The Lua scripts, one per operation. redis.Script runs them with EVALSHA
// and reloads them on NOSCRIPT.
var (
	//go:embed scripts/acquire.lua
	acquireSrc string
	//go:embed scripts/release.lua
	releaseSrc string
	//go:embed scripts/extend.lua
	extendSrc string
	//go:embed scripts/lookup_id.lua
	lookupIDSrc string
	//go:embed scripts/lookup_key.lua
	lookupKeySrc string
	//go:embed scripts/is_locked.lua
	isLockedSrc string

	acquireScript   = redis.NewScript(acquireSrc)
	releaseScript   = redis.NewScript(releaseSrc)
	extendScript    = redis.NewScript(extendSrc)
	lookupIDScript  = redis.NewScript(lookupIDSrc)
	lookupKeyScript = redis.NewScript(lookupKeySrc)
	isLockedScript  = redis.NewScript(isLockedSrc)
)
