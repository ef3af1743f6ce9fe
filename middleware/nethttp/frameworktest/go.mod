module github.com/syncguard-go/syncguard/middleware/nethttp/frameworktest

go 1.26.0

require (
	connectrpc.com/connect v1.21.1
	github.com/go-chi/chi/v5 v5.5.0
	github.com/syncguard-go/syncguard v0.0.0-00010101000000-000000000000
	google.golang.org/protobuf v1.36.12
)

require (
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	github.com/redis/go-redis/v9 v9.23.0 // indirect
	go.uber.org/atomic v1.12.0 // indirect
	golang.org/x/net v0.60.0 // indirect
	golang.org/x/sys v0.48.0 // indirect
	golang.org/x/text v0.43.0 // indirect
)

replace github.com/syncguard-go/syncguard => ../../..
