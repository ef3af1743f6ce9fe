package lockdriver_test

import (
	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/lockdriver"
)

// Regions quoted by the package doc (testkit/readme checks them).

func exampleAcquire(key string) (lock.Lease, error) {
	// README: lockdriver-doc
	key, err := lockdriver.NormalizeKey(key) // NFC, at most MaxKeyBytes
	if err != nil {
		return lock.Lease{}, err // an InvalidArgument *lock.Error
	}
	// END README
	return lock.Lease{Key: key}, nil
}

var _ = exampleAcquire
