// Package echocore is what the Echo v4 and Echo v5 echolock packages
// share, generic over the framework's context type: the key extractors,
// KeyLookup, and the middleware's flow around [core.Guard.Serve]. Each
// adapter keeps its Config, its answers and how it swaps the response
// writer.
package echocore
