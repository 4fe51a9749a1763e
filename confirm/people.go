package confirm

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/acpmux/acpmux/confirm/identity"
	"github.com/acpmux/acpmux/confirm/store"
)

// ErrForbidden: the person may not answer this decision: their role does
// not answer (observer), the policy names approvers they are not among,
// the decision needs a person and the answer came without one, or they
// sent the prompt that led to it and the rule says requester_may_approve =
// false. The answer is journalled (invalid_answer) and not counted; the
// decision stays open (HTTP 403).
var ErrForbidden = errors.New("forbidden")

// mayAnswer returns why the person of ctx may not answer d, or nil.
func mayAnswer(ctx context.Context, d *Decision) error {
	p, ok := identity.PersonFrom(ctx)
	if ok && !p.Role.MayAnswer() {
		return fmt.Errorf("%w: %s is an %s and may not answer", ErrForbidden, p.Name, p.Role)
	}
	g := d.snap.Gate
	if g == nil || g.Approval == nil {
		return nil
	}
	if !ok {
		return fmt.Errorf("%w: rule %s names who may answer; this host has no authenticated person", ErrForbidden, g.DecidedBy)
	}
	if a := g.Approval; a.Approvers != nil && !slices.Contains(a.Approvers, p.Name) {
		return fmt.Errorf("%w: %s is not an approver of this decision", ErrForbidden, p.Name)
	}
	if g.Approval.NoSelfApproval && g.Requester != "" && g.Requester == p.Name {
		return fmt.Errorf("%w: %s sent the prompt that led to this request and may not approve it", ErrForbidden, p.Name)
	}
	return nil
}

// refusePerson journals err as hostID's invalid answer to d, with the person of
// ctx, and returns err.
func (b *Broker) refusePerson(ctx context.Context, d *Decision, hostID string, err error) error {
	d.mu.Lock()
	ev := d.addPersonEvent(b.now().UTC(), store.EventInvalidAnswer, hostID, personName(ctx), err.Error())
	d.mu.Unlock()
	b.persist(d, ev)
	return err
}

// personName is the name of ctx's person, "" when none.
func personName(ctx context.Context) string {
	p, _ := identity.PersonFrom(ctx)
	return p.Name
}

// addPersonEvent is addEvent with the event's Person. d.mu must be held.
func (d *Decision) addPersonEvent(at time.Time, typ store.EventType, host, person, detail string) store.Event {
	ev := d.addEvent(at, typ, host, detail)
	if person != "" {
		ev.Person = person
		d.events[len(d.events)-1].Person = person
	}
	return ev
}
