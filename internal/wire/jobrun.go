package wire

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/lockdriver"
)

// JobRunMagic starts a JobRun's encoding.
const JobRunMagic = "SGJ1"

// ErrBadJobRun is the cause of every DecodeJobRun failure.
var ErrBadJobRun = errors.New("not a syncguard job run record (version 1)")

// JobRun is a gocronlock Locker's record of a job's last run, stored with
// lock.Recorder at the job's lock key: the run's fence, and when the
// instance that ran it fired it, by the backend's clock. Its encoding:
// "SGJ1 <fence> <fired in Unix milliseconds>", readable with redis-cli.
type JobRun struct {
	Fence lock.Fence
	Fired time.Time
}

// Encode returns the record's bytes.
func (r JobRun) Encode() []byte {
	return fmt.Appendf(nil, "%s %s %d", JobRunMagic, r.Fence, r.Fired.UnixMilli())
}

// DecodeJobRun parses b; it returns an error wrapping ErrBadJobRun for
// anything Encode cannot have written.
func DecodeJobRun(b []byte) (JobRun, error) {
	f := strings.Split(string(b), " ")
	if len(f) != 3 || f[0] != JobRunMagic {
		return JobRun{}, fmt.Errorf("%w: not a job run record", ErrBadJobRun)
	}
	fence, err := lockdriver.ParseFence(f[1])
	if err != nil {
		return JobRun{}, fmt.Errorf("%w: bad fence", ErrBadJobRun)
	}
	n, err := strconv.ParseInt(f[2], 10, 64)
	if err != nil || strconv.FormatInt(n, 10) != f[2] {
		return JobRun{}, fmt.Errorf("%w: bad time", ErrBadJobRun)
	}
	return JobRun{Fence: fence, Fired: time.UnixMilli(n).UTC()}, nil
}
