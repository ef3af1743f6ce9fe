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

// The records of an asynqlock Scheduler, stored with lock.Recorder under
// keys derived from the Scheduler's election key: per entry, the last
// tick a term enqueued (ScheduleEntryKey, ScheduleTick); and the entries
// of the latest term that wrote them (ScheduleManifestKey,
// ScheduleManifest). Both are text, readable with redis-cli.
const (
	ScheduleTickMagic     = "SGT1"
	ScheduleManifestMagic = "SGM1"
	// ScheduleMaxEntries is the most entries a manifest holds.
	ScheduleMaxEntries = 10000
)

// ErrBadSchedule is the cause of every DecodeScheduleTick and
// DecodeScheduleManifest failure.
var ErrBadSchedule = errors.New("not a syncguard scheduler record (version 1)")

// ScheduleEntryKey returns the lock key of the entry entryID of the
// Scheduler on key (normalised): "<key>/entry/<entryID>".
func ScheduleEntryKey(key, entryID string) string { return key + "/entry/" + entryID }

// ScheduleManifestKey returns the lock key of the manifest of the
// Scheduler on key (normalised): "<key>/manifest".
func ScheduleManifestKey(key string) string { return key + "/manifest" }

// ScheduleTick is an entry's record: the last tick enqueued and the fence
// of the term (of the Scheduler's key) that enqueued it. Its encoding:
// "SGT1 <fence> <tick in Unix nanoseconds>".
type ScheduleTick struct {
	Fence lock.Fence
	Last  time.Time
}

// Encode returns the record's bytes.
func (r ScheduleTick) Encode() []byte {
	return encodeFenced(ScheduleTickMagic, r.Fence, r.Last.UnixNano())
}

// DecodeScheduleTick parses b; it returns an error wrapping
// ErrBadSchedule for anything Encode cannot have written.
func DecodeScheduleTick(b []byte) (ScheduleTick, error) {
	fence, ns, err := decodeFenced(b, ScheduleTickMagic, ErrBadSchedule, "tick", "tick")
	if err != nil {
		return ScheduleTick{}, err
	}
	return ScheduleTick{Fence: fence, Last: time.Unix(0, ns).UTC()}, nil
}

// ScheduleManifest is the entries of the term that wrote it. Its
// encoding: a line "SGM1 <fence> <entry count> <identity, Go-quoted>",
// then a line "<entry id> <content hash>" per entry, ids ascending.
type ScheduleManifest struct {
	Fence    lock.Fence
	Identity string
	Entries  []ScheduleEntry
}

// ScheduleEntry is an entry in a manifest: its id and the hash of what it
// enqueues, and when.
type ScheduleEntry struct {
	ID, Content string
}

// Encode returns the manifest's bytes; Entries must be sorted by ID.
func (m *ScheduleManifest) Encode() []byte {
	b := fmt.Appendf(nil, "%s %s %d %s", ScheduleManifestMagic, m.Fence, len(m.Entries), strconv.Quote(m.Identity))
	for _, e := range m.Entries {
		b = fmt.Appendf(b, "\n%s %s", e.ID, e.Content)
	}
	return b
}

// DecodeScheduleManifest parses b; it returns an error wrapping
// ErrBadSchedule for anything Encode cannot have written.
func DecodeScheduleManifest(b []byte) (*ScheduleManifest, error) {
	lines := strings.Split(string(b), "\n")
	head := strings.SplitN(lines[0], " ", 4)
	if len(head) != 4 || head[0] != ScheduleManifestMagic {
		return nil, fmt.Errorf("%w: not a manifest", ErrBadSchedule)
	}
	m := &ScheduleManifest{}
	var err error
	if m.Fence, err = lockdriver.ParseFence(head[1]); err != nil {
		return nil, fmt.Errorf("%w: bad fence", ErrBadSchedule)
	}
	n, err := strconv.Atoi(head[2])
	if err != nil || n != len(lines)-1 || n > ScheduleMaxEntries || strconv.Itoa(n) != head[2] {
		return nil, fmt.Errorf("%w: bad entry count", ErrBadSchedule)
	}
	if m.Identity, err = strconv.Unquote(head[3]); err != nil || strconv.Quote(m.Identity) != head[3] {
		return nil, fmt.Errorf("%w: bad identity", ErrBadSchedule)
	}
	for i, line := range lines[1:] {
		id, content, ok := strings.Cut(line, " ")
		if !ok || id == "" || content == "" || strings.Contains(content, " ") || (i > 0 && id <= m.Entries[i-1].ID) {
			return nil, fmt.Errorf("%w: entry %d", ErrBadSchedule, i)
		}
		m.Entries = append(m.Entries, ScheduleEntry{ID: id, Content: content})
	}
	return m, nil
}
