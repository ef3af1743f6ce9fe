module github.com/syncguard-go/syncguard/middleware/echo/v5

go 1.26.0

require (
	github.com/alicebob/miniredis/v2 v2.40.0
	github.com/labstack/echo/v5 v5.4.4
	github.com/redis/go-redis/v9 v9.23.0
	github.com/syncguard-go/syncguard v0.0.0-00010101000000-000000000000
)

require (
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	github.com/yuin/gopher-lua v1.1.1 // indirect
	go.uber.org/atomic v1.12.0 // indirect
	golang.org/x/net v0.60.0 // indirect
	golang.org/x/sys v0.48.0 // indirect
	golang.org/x/text v0.43.0 // indirect
	golang.org/x/time v0.15.0 // indirect
)

replace github.com/syncguard-go/syncguard => ../../..
