package redisbackend_test

import "github.com/syncguard-go/syncguard/redisbackend"

// Two more cases for TestScriptCost: a slot of a concurrency limit (n =
// 4, a key of its own, so uncontended) taken and released through the
// Backend, by FCALL ("slot") and with functions off, by EVALSHA
// ("slot-evalsha").
func init() {
	extraCostCases = append(extraCostCases,
		backendCaseOf("slot", &redisbackend.Options{Prefix: "slot"}, 4, false),
		backendCaseOf("slot-evalsha", &redisbackend.Options{Prefix: "slot-evalsha"}, 4, true))
}
