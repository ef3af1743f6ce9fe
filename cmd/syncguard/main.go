package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/redis/go-redis/v9"

	"github.com/syncguard-go/syncguard/cmd/syncguard/internal/cli"
)

func main() {
	// go-redis logs reconnects and pool trouble itself; the command says
	// what went wrong in one line instead.
	redis.SetLogger(quiet{})
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := cli.Run(ctx, os.Args[1:], cli.OSEnv())
	stop()
	os.Exit(code)
}

type quiet struct{}

func (quiet) Printf(context.Context, string, ...any) {}
