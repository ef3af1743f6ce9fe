//go:build !race

package guardtest

// race is whether this binary was built with -race (see race_on.go).
const race = false
