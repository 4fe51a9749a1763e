package confirm

import "time"

// Names the external tests (package confirm_test) reach that are not part
// of the package's API.
var (
	ErrInvalidTimeout = errInvalidTimeout
	ErrNotPresented   = errNotPresented
	AutoApproveHost   = autoApproveHost
)

// RemovePresenter is removePresenter, for the tests.
func (b *Broker) RemovePresenter(hostID, reason string) { b.removePresenter(hostID, reason) }

// ExpireLiveBridges makes b's next BridgeRef read the set of live bridges
// again, as it does once the set is liveMaxAge old.
func ExpireLiveBridges(b *Broker) {
	b.shared.mu.Lock()
	b.shared.liveAt = time.Time{}
	b.shared.mu.Unlock()
}
