package otellock

// version is the release of this instrumentation, reported as the
// instrumentation scope's version.
const version = "0.1.0"

// Version returns the release of this instrumentation, which is the
// version of its instrumentation scope ([ScopeName]).
func Version() string { return version }
