// Command summary prints the one line that says which optional test
// suites a go test run skipped and why: go run ./internal/optional/summary
// FILE, where FILE is what $ACPMUX_OPTIONAL_SKIPS named during that run.
// .ci/run runs it after go test; see docs/testing.md.
package main

import (
	"fmt"
	"os"

	"github.com/acpmux/acpmux/internal/optional"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: summary FILE")
		os.Exit(2)
	}
	line, err := optional.Summary(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, "summary:", err)
		os.Exit(1)
	}
	fmt.Println(line)
}
