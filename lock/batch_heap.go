package lock

// entryHeap orders entries by due time (container/heap).
type entryHeap []*entry

// Len returns the number of queued entries (heap.Interface, with Less,
// Swap, Push and Pop).
func (h entryHeap) Len() int { return len(h) }

// Less orders by due time.
func (h entryHeap) Less(i, j int) bool { return h[i].due.Before(h[j].due) }

// Swap swaps two entries and keeps their indexes.
func (h entryHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index = i
	h[j].index = j
}

// Push appends an entry.
func (h *entryHeap) Push(x any) {
	e := x.(*entry)
	e.index = len(*h)
	*h = append(*h, e)
}

// Pop removes the last entry.
func (h *entryHeap) Pop() any {
	old := *h
	e := old[len(old)-1]
	old[len(old)-1] = nil
	e.index = -1
	*h = old[:len(old)-1]
	return e
}
