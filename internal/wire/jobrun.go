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
func (r JobRun) Encode() []byte { return encodeFenced(JobRunMagic, r.Fence, r.Fired.UnixMilli()) }

// DecodeJobRun parses b; it returns an error wrapping ErrBadJobRun for
// anything Encode cannot have written.
func DecodeJobRun(b []byte) (JobRun, error) {
	fence, ms, err := decodeFenced(b, JobRunMagic, ErrBadJobRun, "job run", "time")
	if err != nil {
		return JobRun{}, err
	}
	return JobRun{Fence: fence, Fired: time.UnixMilli(ms).UTC()}, nil
}

// encodeFenced is the encoding of a record of a fence and a number:
// "<magic> <fence> <n>".
func encodeFenced(magic string, fence lock.Fence, n int64) []byte {
	return fmt.Appendf(nil, "%s %s %d", magic, fence, n)
}

// decodeFenced parses what encodeFenced wrote with magic; its errors wrap
// bad and name the record (what) and the number (num).
func decodeFenced(b []byte, magic string, bad error, what, num string) (lock.Fence, int64, error) {
	f := strings.Split(string(b), " ")
	if len(f) != 3 || f[0] != magic {
		return "", 0, fmt.Errorf("%w: not a %s record", bad, what)
	}
	fence, err := lockdriver.ParseFence(f[1])
	if err != nil {
		return "", 0, fmt.Errorf("%w: bad fence", bad)
	}
	n, err := strconv.ParseInt(f[2], 10, 64)
	if err != nil || strconv.FormatInt(n, 10) != f[2] {
		return "", 0, fmt.Errorf("%w: bad %s", bad, num)
	}
	return fence, n, nil
}
