// Package leakcheck is the goroutine-leak check each package's TestMain
// runs: the tests, then [optional.Run]'s report of skipped suites, then
// [goleak.Find], which fails the run when a goroutine the tests started is
// still running after they all ended.
package leakcheck

import (
	"fmt"
	"net/http"
	"os"

	"go.uber.org/goleak"

	"github.com/acpmux/acpmux/internal/optional"
)

// Run runs m (a *testing.M, or what wraps it) with [optional.Run] and
// returns its exit status, or 1 when m passed but goroutines outlived it.
// opts are goleak options, such as [goleak.IgnoreTopFunction] for a
// library's background goroutine; each caller says why it ignores one.
func Run(m interface{ Run() int }, opts ...goleak.Option) int {
	code := optional.Run(m)
	if code != 0 {
		return code
	}
	// Idle keep-alive connections of the default HTTP client are net/http's
	// own, kept for reuse by design (a readLoop and a writeLoop each); an
	// idle one is not a test's leak, one still in use is.
	http.DefaultClient.CloseIdleConnections()
	if err := goleak.Find(opts...); err != nil {
		fmt.Fprintln(os.Stderr, "leakcheck:", err)
		return 1
	}
	return 0
}
