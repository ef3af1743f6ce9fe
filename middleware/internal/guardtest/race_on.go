//go:build race

package guardtest

// race is whether this binary was built with -race: DoesNotCompile builds
// with the same flag, so that it finds the packages the test build
// compiled in the build cache instead of compiling them again.
const race = true
