// Package cli is the syncguard command: Run parses a command line and
// runs one of its commands (ls, show, release, watch, doctor) on the Redis
// it names, writing to the streams of an Env, so that tests run it as the
// binary does. One concept per file: connect.go (the Redis and the
// Backend), keys.go (key names of a prefix and layout), lockdata.go (the
// lock JSON), scan.go (SCAN pages of locks), errors.go (one-line errors),
// and a file per command.
package cli
