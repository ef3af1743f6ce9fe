package lockdriver_test

import (
	"fmt"
	"strings"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/lockdriver"
)

func ExampleNormalizeKey() {
	// "e" followed by a combining acute accent becomes the single rune "é".
	key, err := lockdriver.NormalizeKey("cafe\u0301")
	fmt.Println(key, len(key), err)

	_, err = lockdriver.NormalizeKey(strings.Repeat("x", lockdriver.MaxKeyBytes+1))
	fmt.Println(lock.CodeOf(err))
	// Output:
	// café 5 <nil>
	// InvalidArgument
}

func ExampleFormatFence() {
	f, _ := lockdriver.FormatFence(42)
	fmt.Println(f)
	// Output: 000000000000042
}
