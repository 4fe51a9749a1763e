package store_test

import (
	"os"
	"testing"

	"github.com/acpmux/acpmux/internal/leakcheck"
)

func TestMain(m *testing.M) { os.Exit(leakcheck.Run(m)) }
