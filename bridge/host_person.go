package bridge

import (
	"context"
	"fmt"
	"sync"

	"github.com/acpmux/acpmux/acp"
	"github.com/acpmux/acpmux/confirm/identity"
)

// watchMethods are the requests a host whose person may not prompt
// (observer, approver) may still send: it can connect and watch a session,
// nothing that drives the agent.
var watchMethods = map[string]bool{
	acp.MethodInitialize: true,
	MethodSessionAttach:  true,
}

// mayAnswer reports whether h may be shown and answer permission requests
// and questions: a host without a person (the stdio IDE, stream-json), or
// one whose person's role answers.
func (h *Host) mayAnswer() bool { return h.person == nil || h.person.Role.MayAnswer() }

// mayPrompt reports whether h may drive the agent (prompts, sessions,
// modes, cancel): a host without a person, or a controller or admin.
func (h *Host) mayPrompt() bool { return h.person == nil || h.person.Role.MayPrompt() }

// personName is the name of h's person, "" when none.
func (h *Host) personName() string {
	if h.person == nil {
		return ""
	}
	return h.person.Name
}

// personContext returns a context carrying h's person, for the broker.
func (h *Host) personContext() context.Context {
	if h.person == nil {
		return context.Background()
	}
	return identity.WithPerson(context.Background(), *h.person)
}

// describeHost names h in journals and logs: "host ID", plus its person.
func describeHost(h *Host) string {
	if h.person == nil {
		return "host " + h.ID
	}
	return fmt.Sprintf("host %s (person:%s)", h.ID, h.person.Name)
}

// admitMethod refuses, with acp.ErrForbidden, a request that drives the
// agent from a host whose person may not prompt.
func (h *Host) admitMethod(method string) error {
	if h.mayPrompt() || watchMethods[method] {
		return nil
	}
	return fmt.Errorf("%w: %s is an %s: %s needs the controller or admin role (docs/tokens.md)", acp.ErrForbidden, h.person.Name, h.person.Role, method)
}

// requesters remembers, per session, the person whose session/prompt
// started the current prompt turn (Request.Requester).
type requesters struct {
	mu sync.Mutex        // guards m
	m  map[string]string // session id → person name
}

func (r *requesters) set(sid, person string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.m == nil {
		r.m = map[string]string{}
	}
	r.m[sid] = person
}

func (r *requesters) of(sid string) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.m[sid]
}
