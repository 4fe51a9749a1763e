package httpapi

import "github.com/acpmux/acpmux/confirm"

// Presenter is the HTTP API as a confirm.Presenter: a decision presented to
// it is what GET /v1/sessions/{sessionId}/decisions lists, and its answers
// arrive through POST. Present, Withdraw and Won do nothing (a client polls);
// the bridge passes a Presenter to confirm.Broker.Ask so that a decision
// stays open, waiting for the API, when no other host is attached. ID must
// equal Options.HostID ("" means DefaultHostID).
type Presenter struct {
	ID string
}

// HostID implements confirm.Presenter.
func (p Presenter) HostID() string {
	if p.ID == "" {
		return DefaultHostID
	}
	return p.ID
}

// Present implements confirm.Presenter; it never fails.
func (Presenter) Present(*confirm.Decision) error { return nil }

// Withdraw implements [confirm.Presenter]; clients see the status change.
func (Presenter) Withdraw(*confirm.Decision, confirm.Resolution) {}

// Won implements [confirm.Presenter]; the POST that won has its response.
func (Presenter) Won(*confirm.Decision, confirm.Resolution) {}
