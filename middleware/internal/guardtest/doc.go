// Package guardtest is the behavioural test suite that every HTTP
// middleware adapter (httplock, echolock v4 and v5, ginlock) must pass, run against a real
// Redis through testkit/redistest. An adapter's test builds an
// http.Handler from a [Setup] and calls [Run]; the scenarios are written
// once, here.
//
// The adapter's test package must call redistest.Main from TestMain.
package guardtest
