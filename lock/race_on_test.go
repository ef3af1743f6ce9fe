//go:build race

package lock_test

// raceEnabled says the test binary was built with -race.
const raceEnabled = true
