package wire_test

import (
	"fmt"
	"strings"

	"github.com/syncguard-go/syncguard/internal/wire"
)

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
