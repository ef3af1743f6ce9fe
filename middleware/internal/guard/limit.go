package guard

import (
	"fmt"

	"github.com/syncguard-go/syncguard/middleware/httpguard"
)

// limited marks err, a contention error of a Guard with a limit, as
// httpguard.ErrLimitReached.
func limited(err error) error { return fmt.Errorf("%w: %w", httpguard.ErrLimitReached, err) }
