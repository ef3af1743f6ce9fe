package redisbackend_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/syncguard-go/syncguard/redisbackend"
)

// Two more cases for TestScriptCost: a slot of a concurrency limit (n =
// 4, a key of its own, so uncontended) taken and released through the
// Backend, by FCALL ("slot") and with functions off, by EVALSHA
// ("slot-evalsha").
func init() {
	extraCostCases = append(extraCostCases, slotCase("slot", false), slotCase("slot-evalsha", true))
}

func slotCase(name string, evalsha bool) costCase {
	var bk *redisbackend.Backend
	ctx := context.Background()
	return costCase{
		name: name,
		setup: func(t *testing.T, rdb *redis.Client) {
			var err error
			if bk, err = redisbackend.New(rdb, &redisbackend.Options{Prefix: name}); err != nil {
				t.Fatal(err)
			}
			if evalsha {
				redisbackend.DisableFunctions(bk)
			}
		},
		acquire: func(t *testing.T, i int) string {
			key := "k" + strconv.Itoa(i)
			id, err := bk.NewLockID(key)
			if err != nil {
				t.Fatal(err)
			}
			l, err := bk.AcquireSlot(ctx, key, id, 4, 30*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			return l.ID
		},
		release: func(t *testing.T, i int, id string) {
			if err := bk.Release(ctx, id); err != nil {
				t.Fatal(err)
			}
		},
	}
}
