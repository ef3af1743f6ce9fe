package contract

import "reflect"

// MapKey reports whether v can key a map of process-wide state: comparing
// it cannot panic (its dynamic value holds no func, map or slice, however
// deep) and it equals itself (a NaN inside would never be found again).
func MapKey(v any) bool {
	return reflect.ValueOf(v).Comparable() && v == v
}
