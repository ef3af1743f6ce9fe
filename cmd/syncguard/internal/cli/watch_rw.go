package cli

import (
	"fmt"
	"strings"

	"github.com/syncguard-go/syncguard/internal/wire"
)

// rwCounts is what a watch sample saw of the read-write locks
// (lock/rwlock): those held, their readers and writers, and the fresh
// index keys of readers and writers still held when read.
type rwCounts struct {
	locks, readers, writers int
	newReaders, newWriters  int64
}

// rwCounts counts the read-write locks of s.
func (s sample) rwCounts() rwCounts {
	c := rwCounts{newReaders: s.rwNew[0], newWriters: s.rwNew[1]}
	for _, l := range s.limits {
		if !l.rw {
			continue
		}
		c.locks++
		c.readers += l.readers()
		if l.writer != "" {
			c.writers++
		}
	}
	return c
}

// countRWGrant counts the grant of a fresh index key whose value v is a
// read-write lock holder's, by its mode.
func (cur *sample) countRWGrant(v string) {
	if !strings.HasPrefix(v, wire.RWIndexMark) {
		return
	}
	if ix, err := wire.DecodeRWIndex(v); err == nil {
		if ix.Mode == 'w' {
			cur.rwNew[1]++
		} else {
			cur.rwNew[0]++
		}
	}
}

// rwChange is what changed on the read-write locks between two samples.
type rwChange struct {
	joined, left, writers int64 // readers that joined and left, writers granted
}

// rwActivity counts the readers that joined and the writers granted
// between prev and cur, by the holders' fences new in cur or by the fresh
// index keys, whichever is more; the readers that left are the readers of
// prev and those that joined less the readers of cur (an expiry counts as
// leaving). A writer granted and released between the samples, whose
// index key was read as a tombstone, counts among the grants only.
func rwActivity(prev, cur sample) rwChange {
	var ch rwChange
	for k, c := range cur.limits {
		if !c.rw {
			continue
		}
		p := prev.limits[k]
		for f := range c.fences {
			switch {
			case p.fences[f]:
			case f == c.writer:
				ch.writers++
			default:
				ch.joined++
			}
		}
	}
	ch.joined = max(ch.joined, cur.rwNew[0])
	ch.writers = max(ch.writers, cur.rwNew[1])
	ch.left = max(int64(prev.rwCounts().readers)+ch.joined-int64(cur.rwCounts().readers), 0)
	return ch
}

// rwPart is the read-write part of watch's line, "" when no sample saw a
// read-write lock held or changing.
func (r watchRow) rwPart() string {
	if r.ReadWrite == 0 && r.ReadersJoined == 0 && r.ReadersLeft == 0 && r.WritersGranted == 0 {
		return ""
	}
	return fmt.Sprintf("  read-write %d (%s, %s; readers +%d -%d, writers granted %d)", r.ReadWrite,
		count(int64(r.Readers), "reader"), count(int64(r.Writers), "writer"), r.ReadersJoined, r.ReadersLeft, r.WritersGranted)
}
