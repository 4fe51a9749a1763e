package hidden_test

import (
	"os"
	"testing"

	"github.com/acpmux/acpmux/internal/leakcheck"
)

// TestMain fails the run when a goroutine a test started outlives the tests.
func TestMain(m *testing.M) { os.Exit(leakcheck.Run(m)) }
