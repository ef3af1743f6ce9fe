package wire_test

import (
	"fmt"
	"strings"

	"github.com/syncguard-go/syncguard/internal/wire"
	"github.com/syncguard-go/syncguard/lock"
)

func ExampleNormalizeKey() {
	// "e" followed by a combining acute accent becomes the single rune "é".
	key, err := wire.NormalizeKey("cafe\u0301")
	fmt.Println(key, len(key), err)

	_, err = wire.NormalizeKey(strings.Repeat("x", lock.MaxKeyBytes+1))
	fmt.Println(lock.CodeOf(err))
	// Output:
	// café 5 <nil>
	// InvalidArgument
}

func ExampleMakeStorageKey() {
	lockKey, _ := wire.MakeStorageKey("syncguard", "resource:1", 1000, 26)
	fenceKey, _ := wire.MakeStorageKey("syncguard", "fence:"+lockKey, 1000, 26)
	hashed, _ := wire.MakeStorageKey("p", strings.Repeat("x", 600), 500, 0)
	fmt.Println(lockKey)
	fmt.Println(fenceKey)
	fmt.Println(hashed)
	// Output:
	// syncguard:resource:1
	// syncguard:fence:syncguard:resource:1
	// p:ov3k181KlAgqs5sWJvvgfA
}

func ExampleFormatFence() {
	f, _ := wire.FormatFence(42)
	fmt.Println(f)
	// Output: 000000000000042
}
