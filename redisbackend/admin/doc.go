// Package admin is for operators of a redisbackend.Backend: [Check] and
// [CheckRecordedConfig] report what the server and the other instances on
// a prefix do that bears on fences (persistence, eviction, replication,
// cluster mode, the recorded configurations); [StorageKeys] names a lock
// key's Redis keys; [ForceRelease] and [ForceReleaseSlots] free a key whose
// holder is stuck. The syncguard command (doctor, show, release --force)
// is built on it; applications need only package redisbackend.
package admin
