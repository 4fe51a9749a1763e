package gate

import (
	"errors"
	"fmt"
)

// Mode is the gate mode of a session: [ModeDefault] or [ModePlan]. It is
// acpmux's own view, separate from the agent's mode ids (ACP "Session
// Modes"): the bridge engages the gate when a host or the agent selects the
// agent's plan mode. See docs/plan-mode.md.
type Mode string

// The gate modes.
const (
	ModeDefault Mode = "default" // policy rules, remembered verdicts and the agent's own prompts
	ModePlan    Mode = "plan"    // plan-mode routing (docs/plan-mode.md)
)

// ParseMode returns the Mode named s ("default" or "plan"); anything else is
// an error naming s.
func ParseMode(s string) (Mode, error) {
	switch Mode(s) {
	case ModeDefault, ModePlan:
		return Mode(s), nil
	}
	return "", fmt.Errorf("unknown gate mode %q (want plan or default)", s)
}

// ErrModeLocked is returned by the broker's SetMode (package confirm) when
// --lock-mode keeps the gate where --mode put it.
var ErrModeLocked = errors.New("gate mode is locked (--lock-mode)")
