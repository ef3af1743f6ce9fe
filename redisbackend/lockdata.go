package redisbackend

import "github.com/syncguard-go/syncguard/internal/wire"

// decodeLockData parses lock JSON strictly (wire.DecodeLockData); what is
// not lock data is an Internal error that says what was wrong.
func decodeLockData(raw string) (wire.LockData, error) {
	d, err := wire.DecodeLockData(raw)
	if err != nil {
		return d, internal("decode", err.Error())
	}
	return d, nil
}
