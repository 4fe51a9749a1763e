package confirm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/acpmux/acpmux/confirm/store"
)

// voting reports whether answer a to d is a vote (docs/policy.md,
// "Approvers and quorum"): d's rule needs more than one person and a
// chooses an offered option that may approve. A reject, and anything the
// normal path refuses, is not a vote.
func (d *Decision) voting(a Answer) bool {
	g := d.snap.Gate
	if g == nil || g.Approval == nil || g.Approval.Needed() < 2 || a.OptionID == "" {
		return false
	}
	for _, o := range d.snap.Options {
		if o.OptionID == a.OptionID {
			return mayApprove(o)
		}
	}
	return false
}

// vote records a as the vote of ctx's person on d and, when it completes
// the quorum, claims d with it as an answer. The vote is bound to the hash
// of d's snapshot; a snapshot that is stale now closes d (every vote is
// void). The store serialises the casts of every process, so exactly one
// vote sees the count reach the quorum; that one claims. It returns nil for
// a vote that was counted and did not complete the quorum (d stays open).
func (b *Broker) vote(ctx context.Context, d *Decision, hostID string, a Answer) (bool, error) {
	person := personName(ctx)
	if err := b.checkVote(d, hostID, person, a); err != nil {
		return false, err
	}
	if rerr := b.revalidate(ctx, d); rerr != nil {
		opt, ev, err := b.begin(ctx, d, hostID, a)
		if ev != nil {
			b.persist(d, *ev)
		}
		if opt == nil {
			return false, err
		}
		b.commit(d, transition{Status: store.StatusCancelled, Reason: store.ReasonStale}, "stale: every vote is void: "+rerr.Error(), true)
		return false, fmt.Errorf("%w: %w: %v", ErrConflict, ErrStale, rerr)
	}
	need := d.snap.Gate.Approval.Needed()
	n, err := b.castVote(ctx, d, store.Vote{DecisionID: d.id, Person: person, OptionID: a.OptionID,
		SnapshotSHA256: snapshotHash(d.snap), At: b.now().UTC()})
	if errors.Is(err, store.ErrDuplicateVote) {
		return false, b.refusePerson(ctx, d, hostID, fmt.Errorf("%w: %s already voted", store.ErrDuplicateVote, person))
	}
	if err != nil {
		return false, fmt.Errorf("record vote: %w", err)
	}
	n, dropped, cerr := b.activeVotes(ctx, d, a.OptionID, n)
	d.mu.Lock()
	now := b.now().UTC()
	evs := []store.Event{d.addPersonEvent(now, store.EventVote, hostID, person, fmt.Sprintf("%s (%d of %d)", a.OptionID, n, need))}
	for _, p := range dropped {
		if d.voided == nil {
			d.voided = map[string]bool{}
		}
		if !d.voided[p] {
			d.voided[p] = true
			evs = append(evs, d.addPersonEvent(now, store.EventInvalidAnswer, hostID, p, "vote of "+p+" not counted: their token is revoked or expired"))
		}
	}
	d.mu.Unlock()
	for _, ev := range evs {
		b.persist(d, ev)
	}
	if cerr != nil {
		return false, fmt.Errorf("count votes: %w", cerr)
	}
	if n < need {
		return false, nil
	}
	return b.claim(ctx, d, hostID, a)
}

// activeVotes recounts the n stored votes for optionID on d's snapshot
// when n could complete the quorum, counting only people whose token still
// authenticates (docs/policy.md, "Approvers and quorum"): a vote whose
// person's token is now revoked or expired (store.People) is dropped, and
// the person is returned in dropped. A person with no stored token at all
// (a --token-file or --token person) keeps their vote. Without a store
// that keeps both votes and tokens, n is returned unchanged. An error
// reading the store fails closed: the count is 0.
func (b *Broker) activeVotes(ctx context.Context, d *Decision, optionID string, n int) (int, []string, error) {
	vs, ok1 := b.store.(store.Votes)
	ps, ok2 := b.store.(store.People)
	if !ok1 || !ok2 || b.store == nil || n < d.snap.Gate.Approval.Needed() {
		return n, nil, nil
	}
	ctx = context.WithoutCancel(ctx)
	votes, err := vs.VotesOf(ctx, d.id)
	if err != nil {
		return 0, nil, err
	}
	tokens, err := ps.Tokens(ctx)
	if err != nil {
		return 0, nil, err
	}
	now := b.now()
	stored, active := map[string]bool{}, map[string]bool{}
	for _, t := range tokens {
		stored[t.Name] = true
		if t.Active(now) {
			active[t.Name] = true
		}
	}
	hash := snapshotHash(d.snap)
	count := 0
	var dropped []string
	for _, v := range votes {
		if v.OptionID != optionID || v.SnapshotSHA256 != hash {
			continue
		}
		if stored[v.Person] && !active[v.Person] {
			dropped = append(dropped, v.Person)
			continue
		}
		count++
	}
	return count, dropped, nil
}

// checkVote validates a vote as begin validates an answer, without taking
// the claim: a closed decision is a late answer, an invalid one is
// journalled.
func (b *Broker) checkVote(d *Decision, hostID, person string, a Answer) error {
	d.mu.Lock()
	now := b.now().UTC()
	var err error
	if d.status.Closed() {
		err = closedConflict(d.status, d.res.Reason, d.res.By)
		ev := d.addPersonEvent(now, store.EventLateAnswer, hostID, person, describe(a))
		d.mu.Unlock()
		b.persist(d, ev)
		return err
	}
	if _, err = d.check(a); err == nil {
		err = b.checkScope(d, a)
	}
	if err == nil {
		d.mu.Unlock()
		return nil
	}
	ev := d.addPersonEvent(now, store.EventInvalidAnswer, hostID, person, err.Error())
	d.mu.Unlock()
	b.persist(d, ev)
	return err
}

// castVote stores v (store.Votes) and returns how many people chose v's
// option on v's snapshot; a broker without such a store counts in memory.
func (b *Broker) castVote(ctx context.Context, d *Decision, v store.Vote) (int, error) {
	if vs, ok := b.store.(store.Votes); ok && b.store != nil {
		return vs.CastVote(context.WithoutCancel(ctx), v)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.votes == nil {
		d.votes = map[string]string{}
	}
	if _, dup := d.votes[v.Person]; dup {
		return 0, store.ErrDuplicateVote
	}
	d.votes[v.Person] = v.OptionID
	n := 0
	for _, o := range d.votes {
		if o == v.OptionID {
			n++
		}
	}
	return n, nil
}

// snapshotHash is the lowercase hex SHA-256 of s as stored: what a vote is
// bound to.
func snapshotHash(s Snapshot) string {
	b, _ := json.Marshal(s)
	return sha256Hex(b)
}
