package waitfile_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/acpmux/acpmux/internal/leakcheck"
	"github.com/acpmux/acpmux/internal/waitfile"
)

func TestMain(m *testing.M) { os.Exit(leakcheck.Run(m)) }

// TestContainsSeesALaterAppend: Contains returns once another writer has
// appended the text to a file that did not exist when it started, and
// fails after the timeout when the text never comes.
func TestContainsSeesALaterAppend(t *testing.T) {
	path := filepath.Join(t.TempDir(), "log")
	wrote := make(chan struct{})
	go func() {
		defer close(wrote)
		os.WriteFile(path, []byte("first\n"), 0o600)
		f, _ := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
		f.WriteString("the marker\n")
		f.Close()
	}()
	data, err := waitfile.Contains(path, "marker", 10*time.Second)
	<-wrote
	if err != nil || !strings.Contains(string(data), "the marker") {
		t.Fatalf("Contains: %q, %v", data, err)
	}
	if _, err := waitfile.Contains(path, "never", 50*time.Millisecond); err == nil {
		t.Fatal("Contains found text that was never written")
	}
}
