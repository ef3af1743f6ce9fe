// Package admin is for operators of a redisbackend.Backend. Applications
// need only package redisbackend.
//
// Check asks the server whether it keeps fences safe: persistence,
// eviction, replication and cluster mode. Run it at start-up, and refuse
// to run on a server whose fences go back after a restart:
//
//	report, err := admin.Check(ctx, b)
//	if err != nil {
//		log.Fatal(err) // Redis cannot be reached, or rejects the credentials
//	}
//
//	if report.Worst() == admin.SeveritySevere {
//		log.Fatal("this Redis cannot keep fences")
//	}
//
// CheckRecordedConfig reports instances on a prefix that name keys
// differently. StorageKeys names a lock key's Redis keys. ForceRelease
// frees a key whose holder is stuck. The syncguard command is built on this
// package. docs/fences.md and docs/operating.md in the repository explain
// the findings.
package admin
