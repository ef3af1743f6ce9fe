package ginlock_test

import (
	"testing"

	"github.com/gin-gonic/gin"

	"github.com/syncguard-go/syncguard/testkit/redistest"
)

// TestMain silences gin's debug output and stops the package's shared
// redis-server after the tests.
func TestMain(m *testing.M) {
	gin.SetMode(gin.TestMode)
	redistest.Main(m)
}
