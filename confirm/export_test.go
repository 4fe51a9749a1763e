package confirm

// Names the external tests (package confirm_test) reach that are not part
// of the package's API.
var (
	ErrInvalidTimeout = errInvalidTimeout
	ErrNotPresented   = errNotPresented
	AutoApproveHost   = autoApproveHost
)

// RemovePresenter is removePresenter, for the tests.
func (b *Broker) RemovePresenter(hostID, reason string) { b.removePresenter(hostID, reason) }
