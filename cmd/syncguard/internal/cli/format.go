package cli

import (
	"fmt"
	"strconv"
	"time"
	"unicode"
)

// duration formats d for a column: 850ms, 12.3s, 4m05s, 2h03m, 3d04h.
func duration(d time.Duration) string {
	sign := ""
	if d < 0 {
		sign, d = "-", -d
	}
	switch {
	case d < time.Second:
		return sign + strconv.FormatInt(d.Milliseconds(), 10) + "ms"
	case d < time.Minute:
		return sign + strconv.FormatFloat(d.Seconds(), 'f', 1, 64) + "s"
	case d < time.Hour:
		return fmt.Sprintf("%s%dm%02ds", sign, d/time.Minute, d%time.Minute/time.Second)
	case d < 24*time.Hour:
		return fmt.Sprintf("%s%dh%02dm", sign, d/time.Hour, d%time.Hour/time.Minute)
	}
	return fmt.Sprintf("%s%dd%02dh", sign, d/(24*time.Hour), d%(24*time.Hour)/time.Hour)
}

// ms is a duration of n milliseconds.
func ms(n int64) time.Duration { return time.Duration(n) * time.Millisecond }

// display returns a key as it is when it prints on one line as itself, and
// Go-quoted otherwise (spaces at its ends, control or invisible characters,
// a leading '"'), so that every lock stays one line of output.
func display(key string) string {
	if key == "" || key[0] == '"' || key[0] == ' ' || key[len(key)-1] == ' ' {
		return strconv.Quote(key)
	}
	for _, r := range key {
		if r == unicode.ReplacementChar || (!unicode.IsPrint(r) && r != ' ') {
			return strconv.Quote(key)
		}
	}
	return key
}

// timestamp formats a server time for show: UTC, to the millisecond.
func timestamp(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }
