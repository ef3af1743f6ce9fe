// Package transport sends redisbackend's commands on a go-redis client.
// Every call returns by its context's deadline; concurrent script calls
// share pipelines. docs/client-retries.md has the rules.
package transport
